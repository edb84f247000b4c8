import { serve } from '@hono/node-server';
import { basicAppCases } from '../shared/basic-app-cases.js';
import { listenExpress, startEach } from '../shared/listen.js';
import { createApp } from './app.js';

describe('examples/hono-basic', () => {
  // serve() listens at once; listenExpress waits for it and closes it after each test.
  basicAppCases(
    startEach(() =>
      listenExpress({
        listen: (port, hostname) => serve({ fetch: createApp().fetch, port, hostname }) as never,
      }),
    ),
  );
});

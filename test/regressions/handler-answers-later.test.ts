import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { recordWarnings } from '../support/warnings.js';

// A handler that answers from a callback after it returned (Express's res.render reads its view
// first; a slow database) must keep its own answer: Sluice answering for it at once (the merge of
// wt-d), or after a 250 ms grace (fb53e00; the second review), made the handler's answer throw
// ERR_HTTP_HEADERS_SENT inside the callback, an uncaught exception that ends the process. Only a
// handler that returns a body (errorResponseBuilder's shape) is answered for.
const { codes } = recordWarnings();
const later = (send: () => void) => void setTimeout(send, 400);

it('Express: the handler answers from a callback, and that answer is the one sent', async () => {
  const app = expressVersions[0]![1]();
  app.use(
    rateLimiter({
      limit: 1,
      window: '1h',
      handler: (_req, res) => later(() => res.status(429).send('later')),
    }),
  );
  app.get('/', (_req, res) => void res.send('ok'));
  expect((await request(app).get('/')).status).toBe(200);
  const refused = await request(app).get('/');
  expect([refused.status, refused.text]).toEqual([429, 'later']);
  expect(codes).toEqual([]);
});

it('Fastify: the same', async () => {
  const app = frameworks[0]![1]();
  await app.register(sluice, {
    limit: 1,
    window: '1h',
    handler: (_request: unknown, reply: { send(body: string): void }) => later(() => reply.send('later')),
  } as never);
  app.get('/', async () => 'ok');
  expect((await app.inject({ url: '/' })).statusCode).toBe(200);
  const refused = await app.inject({ url: '/' });
  expect([refused.statusCode, refused.body]).toEqual([429, 'later']);
  expect(codes).toEqual([]);
  await app.close();
});

import { basicAppCases } from '../shared/basic-app-cases.js';
import { listenExpress, startEach } from '../shared/listen.js';
import { createApp } from './app.js';

describe('examples/koa-basic', () => {
  basicAppCases(startEach(() => listenExpress(createApp())));
});

import { basicAppCases } from '../shared/basic-app-cases.js';
import { listenExpress, startEach } from '../shared/listen.js';
import { createApp } from './app.js';

describe('examples/express-basic', () => {
  basicAppCases(startEach(() => listenExpress(createApp())));
});

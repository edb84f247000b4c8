/**
 * One configuration of the memory suite, in a process of its own: an Express app whose limiter sees
 * `subjects` distinct client addresses, then its resident memory after a full GC.
 *
 * The requests go to the app's middleware in process, with Express's own request object (so `req.ip`
 * and `trust proxy` are Express's) and a stub response: a million HTTP requests would take minutes
 * per configuration, and the memory asked about is what the limiter holds, not sockets'.
 */
import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { clientAddress } from '../lib/load.mjs';
import { UNREACHED } from '../lib/policies.mjs';

const [config, count] = process.argv.slice(2);
const WINDOW_MS = 60_000;

const middleware = {
  bare: () => (_req, _res, next) => next(),
  'sluice-default': () => rateLimiter({ limit: UNREACHED, window: WINDOW_MS }),
  'sluice-100k': () =>
    rateLimiter({ limit: UNREACHED, window: WINDOW_MS, store: new MemoryStore({ maxKeys: 100_000 }) }),
  'erl-memory': () => rateLimit({ limit: UNREACHED, windowMs: WINDOW_MS, validate: false }),
  'rlf-memory': () => {
    const limiter = new RateLimiterMemory({ points: UNREACHED, duration: WINDOW_MS / 1000 });
    return (req, _res, next) => limiter.consume(req.ip).then(() => next(), next);
  },
}[config]();

const app = express();
app.set('trust proxy', true);
app.use(middleware);
app.get('/', (_req, res) => res.send('hello world'));

const socket = { remoteAddress: '127.0.0.1' };
const response = {
  statusCode: 200,
  headersSent: false,
  setHeader() {},
  getHeader() {},
  append() {
    return this;
  },
  on() {
    return this;
  },
  once() {
    return this;
  },
};

function request(address) {
  const req = Object.create(app.request);
  req.headers = { host: 'bench', 'x-forwarded-for': address };
  req.socket = socket;
  req.method = 'GET';
  req.url = '/';
  return new Promise((resolve, reject) => middleware(req, response, (e) => (e ? reject(e) : resolve())));
}

function settled() {
  for (let i = 0; i < 3; i++) global.gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

const before = settled();
const started = Date.now();
for (let i = 0; i < Number(count); i++) await request(clientAddress(i));
const seconds = (Date.now() - started) / 1000;
const after = settled();
process.stdout.write(JSON.stringify({ config, subjects: Number(count), before, after, seconds }));
process.exit(0);

/**
 * Memory: resident memory of an Express app after 1,000,000 distinct clients (fewer outside the full
 * run), Sluice's MemoryStore with maxKeys at its default and at 100,000, beside the bare app and the
 * memory stores of express-rate-limit and rate-limiter-flexible. Each configuration is a fresh process;
 * the requests go to the app's middleware in process with Express's own request object (so `req.ip` and
 * trust proxy are Express's) and a stub response: what is measured is what the limiter holds.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { clientAddress, pick, progress, UNREACHED, writeResults } from '../lib/common.mjs';

const SUBJECTS = pick({ smoke: 20_000, quick: 100_000, full: 1_000_000 });
const CONFIGS = ['bare', 'sluice-default', 'sluice-100k', 'erl-memory', 'rlf-memory'];
const WINDOW_MS = 60_000;

/** In a process of its own: the app of `config` after `count` clients, its memory after full GCs. */
async function measure(config, count) {
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
  const socket = { remoteAddress: '127.0.0.1' };
  const chain = () => response;
  const response = {
    statusCode: 200,
    headersSent: false,
    setHeader() {},
    getHeader() {},
    append: chain,
    on: chain,
    once: chain,
  };
  const request = (address) => {
    const req = Object.create(app.request);
    Object.assign(req, {
      headers: { host: 'bench', 'x-forwarded-for': address },
      socket,
      method: 'GET',
      url: '/',
    });
    return new Promise((resolve, reject) => middleware(req, response, (e) => (e ? reject(e) : resolve())));
  };
  const settled = () => {
    for (let i = 0; i < 3; i++) global.gc();
    const { rss, heapUsed } = process.memoryUsage();
    return { rss, heapUsed };
  };
  const before = settled();
  for (let i = 0; i < count; i++) await request(clientAddress(i));
  return { config, subjects: count, before, after: settled() };
}

if (process.argv[2] === '--config') {
  process.stdout.write(JSON.stringify(await measure(process.argv[3], Number(process.argv[4]))));
  process.exit(0);
} else {
  const started = Date.now();
  const rows = [];
  for (const config of CONFIGS) {
    const args = ['--expose-gc', fileURLToPath(import.meta.url), '--config', config, String(SUBJECTS)];
    rows.push(JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' })));
    progress(
      `memory: ${config}: ${(rows.at(-1).after.rss / 2 ** 20).toFixed(0)} MiB resident after ${SUBJECTS} clients`,
    );
  }
  writeResults('memory', { settings: { subjects: SUBJECTS }, durationMs: Date.now() - started, rows });
}

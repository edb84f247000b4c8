import type { Store } from '@sluice/core';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import type { Express, NextFunction, Request, Response, Router } from 'express';
import express5 from 'express';
import express4 from 'express4';
import request from 'supertest';
import { expectHeaderCase, type HeaderCase } from '../../../test/fixtures/header-cases.js';

/** Both major versions of Express: every suite runs on each. */
export const expressVersions: ReadonlyArray<readonly [string, () => Express, () => Router]> = [
  ['Express 5', () => express5(), () => express5.Router()],
  [
    'Express 4',
    () => (express4 as unknown as () => Express)(),
    () => (express4 as unknown as typeof express5).Router(),
  ],
];

/** Answers every error as JSON 500 with its message, so a test sees what reached next(err). */
export function errorsAsJson(app: Express): void {
  app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: error.message });
  });
}

/** Resolves after the event loop has had a turn (refunds and strikes landing). */
export function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every 5 ms until it holds; throws after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached');
    await tick(5);
  }
}

/** Runs one case of the shared header table on a fresh app: `c.requests` identical requests, the last checked. */
export async function checkHeaderCase(
  makeApp: () => Express,
  c: HeaderCase,
  store: Store,
  extra: RateLimiterOptions = {},
): Promise<void> {
  const app = makeApp();
  app.use(rateLimiter({ ...c.options, ...extra, store }));
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  let last: request.Response | undefined;
  for (let i = 0; i < c.requests; i++) last = await request(app).get('/');
  expectHeaderCase(c, { status: last!.status, headers: last!.headers, body: last!.text });
}

/** Helpers of the shared adapter suite: servers closed after each test, real requests, raw clients. */
import { connect } from 'node:net';
import request from 'supertest';
import type { AppSettings, Framework, Running, SharedOptions } from './framework.js';

export { failingStore, recording, slowStore } from '../fixtures/stores.js';

/** `start(options)` on this framework; every app started is closed after the test. */
export function serving(
  framework: Framework,
): (options: SharedOptions, settings?: AppSettings) => Promise<Running> {
  const running: Running[] = [];
  afterEach(() => Promise.all(running.splice(0).map((app) => app.close())));
  return async (options, settings) => {
    const app = await framework.start(options, settings);
    running.push(app);
    return app;
  };
}

/** A real GET on the app (a fresh connection each). */
export function get(app: Running, path = '/', headers: Record<string, string> = {}) {
  return request(app.url).get(path).set(headers);
}

/** The statuses of `n` GETs in turn. */
export async function statuses(
  app: Running,
  n: number,
  path = '/',
  headers: Record<string, string> = {},
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await get(app, path, headers)).status);
  return out;
}

/** Resolves after `ms` (refunds and strikes landing). */
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

/** Sends a GET on a raw socket and destroys it once `ready` holds (polled): a client that goes away. */
export function abandonWhen(app: Running, path: string, ready: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(app.port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      const leave = () => {
        socket.destroy();
        resolve();
      };
      until(ready, 10_000).then(leave, leave);
    });
    socket.on('error', () => resolve());
  });
}

/**
 * Sends a GET on a raw socket and destroys it after `afterMs`: a client that goes away (with `reset`,
 * by a TCP reset rather than a close).
 */
export function abandon(
  app: Pick<Running, 'port'>,
  path: string,
  afterMs: number,
  reset = false,
): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(app.port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      setTimeout(() => {
        if (reset) socket.resetAndDestroy();
        else socket.destroy();
        resolve();
      }, afterMs);
    });
    socket.on('error', () => resolve());
  });
}

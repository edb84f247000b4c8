/**
 * What a framework is to the shared adapter suite (./frameworks.ts lists them): each `start(options)` builds
 * the same app (the same routes answering the same way) with a Sluice limiter from `options` in front
 * of every route, on a real server listening on 127.0.0.1. A test then sends real HTTP requests and
 * expects the same answers whatever the framework: one options object, one set of answers.
 *
 * The routes:
 * - `GET /`: `{ remaining, delayMs }` of the decision the framework holds for the request (null when none);
 * - `GET /ok`, `GET /fast`: 'ok' / 'fast'; `GET /fail`: 500; `POST /login?pw=right`: 200, else 401;
 * - `GET /slow`: answers once `control.open()` was called;
 * - `GET /hang`: answers when the test calls `control.held[i](status)`, whether or not the client is there;
 * - `GET /work`: awaits `control.work()`, then answers 500.
 * An error passed to the framework's error handling is answered 500 `{ error: message }`.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Decision, HttpOptions } from '@sluice/core';

/** The options every framework takes; request callbacks read the request with `Framework.header`. */
// biome-ignore lint/suspicious/noExplicitAny: each framework types its own request
export type SharedOptions = HttpOptions<any, any>;

/** What the routes of a running app let a test do. */
export interface Control {
  /** `GET /slow` answers once this is called. */
  open(): void;
  /** One function per `GET /hang` that reached its route: ends that response with this status. */
  readonly held: ((status: number) => void)[];
  /** When each `GET /` reached its route (Date.now()). */
  readonly reached: number[];
  /** What `GET /work` does before it answers 500; set it before sending requests. */
  work: () => Promise<void>;
}

export interface Running {
  /** http://127.0.0.1:port */
  readonly url: string;
  readonly port: number;
  readonly control: Control;
  close(): Promise<void>;
}

/** How the app is served. */
export interface AppSettings {
  /**
   * Trust X-Forwarded-For the framework's own way: true, any proxy (its first entry is the client); a
   * number, that many proxies in front (a hop count: with 1, its last entry is the client).
   */
  trustProxy?: boolean | number;
  /** Node's limit on request headers (default 16 kB). */
  maxHeaderSize?: number;
  /** A second limiter, after the first, on every route: two limiters deciding one request. */
  second?: SharedOptions;
  /**
   * A timeout before the limiter: a request with `x-slow` is answered 503 `timeout` after this many
   * ms, the framework's usual way, while the limiter may still be deciding it.
   */
  timeoutMs?: number;
  /**
   * `POST /login?pw=right` resets the request's subject with the limiter's own `reset(req)` and answers
   * 200 `{ subject }` (its `subjectOf(req)`): the middleware's, Fastify's `app.rateLimit()` hook's,
   * or the injected `SluiceGuard`'s on NestJS.
   */
  resetOnLogin?: boolean;
  /**
   * Asynchronous work of this many ms before the limiter on every request, the framework's usual way
   * (as a body parser reading the body does): a client may reset its connection meanwhile.
   */
  beforeMs?: number;
}

/** Whether a request's headers ask for the timeout of `AppSettings.timeoutMs`. */
export function slow(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['x-slow'] !== undefined;
}

export interface Framework {
  readonly name: string;
  start(options: SharedOptions, settings?: AppSettings): Promise<Running>;
  /** A header of the request as the framework gives it to `subject`, `skip`, `cost` and the lists. */
  header(req: unknown, name: string): string | undefined;
  /**
   * A `handler` option answering JSON `body(decision, the decision the framework holds for the
   * request)` the framework's way, with the status Sluice already set.
   */
  answer(body: (decision: Decision, onRequest: Decision | undefined) => unknown): SharedOptions['handler'];
}

export function control(): Control & { gate: Promise<void> } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, gate, held: [], reached: [], work: () => Promise.resolve() };
}

export function view(decision: Decision | undefined) {
  return { remaining: decision?.remaining ?? null, delayMs: decision?.delayMs ?? null };
}

export async function listening(server: Server, c: Control): Promise<Running> {
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    control: c,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

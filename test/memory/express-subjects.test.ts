import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';

/**
 * An Express middleware on the memory store fed 1,000,000 distinct subjects, called in process (no
 * sockets: the point is what the limiter keeps, not HTTP). The store never holds more than maxKeys
 * entries, and once it is full memory stops growing: the heap after a full GC and the resident size
 * at 500,000 and at 1,000,000 subjects differ by no more than a loose bound (so this cannot flake;
 * the memory benchmark measures the real numbers).
 */
jest.setTimeout(180_000);

// Express's own types, as the middleware takes them (express resolves from packages/express only).
type Middleware = ReturnType<typeof rateLimiter>;
type Request = Parameters<Middleware>[0];
type Response = Parameters<Middleware>[1];
type NextFunction = Parameters<Middleware>[2];

const SUBJECTS = 1_000_000;
const MAX_KEYS = 100_000;
const HEAP_GROWTH_LIMIT = 16 * 1024 * 1024;
const RSS_GROWTH_LIMIT = 96 * 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The least of a request and a response that the middleware touches. */
function exchange(subject: string): [Request, Response] {
  const req = { headers: { 'x-subject': subject }, ip: '203.0.113.7', query: {} } as unknown as Request;
  const res = {
    statusCode: 200,
    setHeader() {},
    end() {},
    once() {},
  } as unknown as Response;
  return [req, res];
}

function settled(): { heap: number; rss: number } {
  gc();
  gc();
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

it('1,000,000 distinct subjects: at most maxKeys entries, and memory stops growing', () => {
  const store = new MemoryStore({ maxKeys: MAX_KEYS });
  const middleware = rateLimiter({
    limit: 5,
    window: '1h',
    store,
    subject: (req) => req.headers['x-subject'] as string,
  });
  let passed = 0;
  const next: NextFunction = () => {
    passed++;
  };
  const checkpoints: Array<{ at: number; heap: number; rss: number; size: number }> = [];
  for (let i = 1; i <= SUBJECTS; i++) {
    const [req, res] = exchange(`user-${i}`);
    middleware(req, res, next);
    if (i % 250_000 === 0) {
      expect(store.size).toBeLessThanOrEqual(MAX_KEYS);
      checkpoints.push({ at: i, size: store.size, ...settled() });
    }
  }
  // Every subject was new, so every request passed: nothing was answered asynchronously or dropped.
  expect(passed).toBe(SUBJECTS);
  const half = checkpoints.find((c) => c.at === SUBJECTS / 2)!;
  const end = checkpoints.at(-1)!;
  console.log(
    checkpoints
      .map(
        (c) =>
          `${c.at}: ${c.size} keys, heap ${(c.heap / 2 ** 20).toFixed(1)} MB, rss ${(c.rss / 2 ** 20).toFixed(1)} MB`,
      )
      .join('\n'),
  );
  expect(end.size).toBe(MAX_KEYS);
  expect(end.heap - half.heap).toBeLessThan(HEAP_GROWTH_LIMIT);
  expect(end.rss - half.rss).toBeLessThan(RSS_GROWTH_LIMIT);
  // Still limiting: the newest subject (one call made) spends the rest of its 5 and is refused.
  const [req, res] = exchange('user-1000000');
  for (let i = 0; i < 5; i++) middleware(req, res, next);
  expect((req as unknown as { rateLimit: { allowed: boolean } }).rateLimit.allowed).toBe(false);
});

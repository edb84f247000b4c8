import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENTS, describeNetns, type Lab, labUp } from '../support/netns.js';
import {
  type App,
  admitted,
  DIRECT,
  PROXIED,
  type Sent,
  send,
  startApp,
  startProxy,
} from '../support/netns-apps.js';
import { snippets } from './snippets.js';

/**
 * Each README quick start, as written (the block itself, run on the package sources), must be safe as
 * copied: with no proxy in front, a client cannot choose its own address, so one that writes a new
 * X-Forwarded-For on every request still gets no more than the limit; behind a proxy on a private
 * network, two clients are limited apart and a rotating one is still held to the limit. The clients
 * connect from public (documentation) addresses in a network namespace of their own: a client on
 * 127.0.0.1 is loopback, which a trust by subnet rightly takes for a proxy.
 */
jest.setTimeout(120_000);

interface QuickStart {
  /** The adapter the block imports (`@sluice/express`), which names it. */
  adapter: string;
  /** The route held to the tightest limit that a client without credentials meets. */
  method: 'GET' | 'POST';
  path: string;
  /** The most a client may be admitted there within `ms` of its first request. */
  most(ms: number): number;
  /** A route under the plugin's global limit, and that limit: the global limit must cover some route. */
  global?: { path: string; limit: number };
}

const QUICK_STARTS: QuickStart[] = [
  { adapter: 'express', method: 'POST', path: '/login', most: () => 5 },
  // A token bucket: 20 at once, then 10 a second.
  {
    adapter: 'fastify',
    method: 'GET',
    path: '/search',
    most: (ms) => 20 + Math.ceil(ms / 100),
    global: { path: '/', limit: 100 },
  },
  { adapter: 'hono', method: 'POST', path: '/login', most: () => 5 },
  { adapter: 'koa', method: 'GET', path: '/', most: () => 100 },
  { adapter: 'nestjs', method: 'GET', path: '/login', most: () => 5 },
];

/** The README block that imports the adapter and serves on port 3000: the quick start. */
function quickStart(adapter: string): { file: string; code: string } {
  const found = snippets().filter(
    (s) =>
      s.where.startsWith('README.md:') &&
      s.code.includes(`from '@sluice/${adapter}'`) &&
      /listen\(3000\)|port: 3000/.test(s.code),
  );
  if (found.length !== 1)
    throw new Error(`README.md has ${found.length} quick starts for @sluice/${adapter} that serve on 3000`);
  return { file: `${adapter}.${found[0]!.language === 'ts' ? 'ts' : 'mjs'}`, code: found[0]!.code };
}

/**
 * Sliding windows are aligned to the minute: a burst that spans a minute's end would see two. The
 * longest (110 requests through the proxy) takes seconds even on a loaded machine: 20 s to spare.
 */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

/** Every answer was the route's own or a refusal: nothing failed or went unanswered. */
function onlyAnswersAndRefusals(sent: Sent): void {
  expect(Object.keys(sent.statuses).filter((s) => !/^(2\d\d|429)$/.test(s))).toEqual([]);
}

describeNetns('README quick starts, as written, against a client rotating X-Forwarded-For', () => {
  let lab: Lab | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-quick-start-'));

  beforeAll(async () => {
    lab = labUp();
    await startProxy(lab);
  });

  afterAll(() => {
    lab?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  describe.each(QUICK_STARTS)('$adapter', ({ adapter, method, path, most, global }) => {
    let app: App | undefined;

    beforeAll(async () => {
      const { file, code } = quickStart(adapter);
      writeFileSync(join(dir, file), code);
      app = await startApp(lab!, join(dir, file), adapter);
    });

    afterAll(() => {
      app?.child.kill('SIGKILL');
    });

    test('no proxy in front: no more than the limit', async () => {
      await awayFromMinuteEnd();
      const count = most(0) + 10;
      const sent = await send(lab!, { url: DIRECT + path, method, count, from: CLIENTS[0], rotate: true });
      onlyAnswersAndRefusals(sent);
      expect(admitted(sent)).toBeGreaterThan(0);
      expect(admitted(sent)).toBeLessThanOrEqual(most(sent.ms));
    });

    test('behind a proxy: a rotating client no more than the limit, and another client limited apart', async () => {
      await awayFromMinuteEnd();
      const count = most(0) + 10;
      const rotating = await send(lab!, {
        url: PROXIED + path,
        method,
        count,
        from: CLIENTS[1],
        rotate: true,
      });
      onlyAnswersAndRefusals(rotating);
      expect(admitted(rotating)).toBeGreaterThan(0);
      expect(admitted(rotating)).toBeLessThanOrEqual(most(rotating.ms));
      const other = await send(lab!, { url: PROXIED + path, method, count: 1, from: CLIENTS[2] });
      expect(other.statuses).toEqual({ 200: 1 });
    });

    if (global !== undefined) {
      test(`the global limit covers ${global.path}: ${global.limit} a client, then 429`, async () => {
        await awayFromMinuteEnd();
        const sent = await send(lab!, {
          url: DIRECT + global.path,
          count: global.limit + 5,
          from: CLIENTS[2],
        });
        expect(sent.statuses).toEqual({ 200: global.limit, 429: 5 });
      });
    }
  });
});

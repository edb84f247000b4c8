import { join } from 'node:path';
import { CLIENTS, describeNetns, type Lab, labUp } from '../support/netns.js';
import { type App, DIRECT, PROXIED, send, startApp, startProxy } from '../support/netns-apps.js';

/**
 * ERR_SLUICE_TRUST_PROXY_PUBLIC: the tell-tale of a hop count (or trust in every proxy) on a server
 * that clients reach directly. It fires when an address is taken from X-Forwarded-For on a connection
 * from a public address that was trusted by count, and only then: behind a proxy on a private network,
 * under a trust by address (a CDN's published ranges are public and rightly trusted), or under the
 * quick starts' trust by subnet, it stays silent. Real sockets from public (documentation) addresses,
 * in network namespaces of the test's own.
 */
jest.setTimeout(60_000);

const APP = join(__dirname, '..', 'fixtures', 'netns', 'trust-app.mjs');
const CODE = 'ERR_SLUICE_TRUST_PROXY_PUBLIC';

describeNetns('ERR_SLUICE_TRUST_PROXY_PUBLIC', () => {
  let lab: Lab | undefined;
  let app: App | undefined;

  beforeAll(async () => {
    lab = labUp();
    await startProxy(lab);
  });
  afterEach(() => app?.child.kill('SIGKILL'));
  afterAll(() => lab?.down());

  /** The warning codes the app printed after three requests with a made-up X-Forwarded-For each. */
  async function warnings(framework: string, setting: unknown, url: string): Promise<string[]> {
    app = await startApp(lab!, APP, framework, [JSON.stringify(setting)]);
    const sent = await send(lab!, { url: `${url}/`, count: 3, from: CLIENTS[0], rotate: true });
    expect(sent.statuses).toEqual({ 200: 3 });
    // A warning is printed on the tick after the request that raised it: give the pipe a moment.
    await new Promise((r) => setTimeout(r, 300));
    return [...app.output().matchAll(/^warning (\S+)$/gm)].map((m) => m[1]!);
  }

  test.each([
    ['Express, a hop count', 'express', 1],
    ['Express, trust proxy true', 'express', true],
    ['Koa, app.proxy with maxIpsCount 1', 'koa', 1],
  ])('%s, reached directly: warned, once', async (_, framework, setting) => {
    const codes = await warnings(framework, setting, DIRECT);
    expect(codes.filter((c) => c === CODE)).toEqual([CODE]);
  });

  test.each([
    ['Express, a hop count, behind a proxy on a private network', 1, PROXIED],
    [
      'Express, trust by address naming the public peer (a CDN range)',
      ['loopback', '203.0.113.0/24'],
      DIRECT,
    ],
  ])('%s: silent', async (_, setting, url) => {
    expect(await warnings('express', setting, url)).not.toContain(CODE);
  });

  // ERR_SLUICE_FORWARDED_IGNORED would tell the user to trust a proxy that is not there, and a hop
  // count is the first fix that comes to mind: a client writing its own header is no proxy.
  test("the quick start's 'loopback, linklocal, uniquelocal' reached directly: no warning at all", async () => {
    expect(await warnings('express', 'loopback, linklocal, uniquelocal', DIRECT)).toEqual([]);
  });
});

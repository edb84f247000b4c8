import { recordWarnings } from '../../support/warnings.js';
import type { Framework } from '../framework.js';
import { get, serving, statuses } from '../support.js';

/**
 * The proxy warnings (API.md r2, `validate`), the same on every framework: they read the app's own
 * trust-proxy setting, on NestJS too (Nest on Fastify told nothing of `trustProxy: true` before
 * checkTrustProxy moved into the core), and never let a setting the framework ignores pass in silence.
 */
export function proxyWarnings(framework: Framework): void {
  const start = serving(framework);
  const { codes } = recordWarnings();
  const limit = { limit: 100, window: '1m' };
  const fromProxy = { 'x-forwarded-for': '203.0.113.9' };
  // Hono and fetch handlers have no setting: the app's own getIp reads the header, and Sluice cannot
  // tell how (a fetch handler always has one: a Request carries no address).
  const warnsOfTrust = !/^(Hono|fetch)/.test(framework.name);
  const getIpAlways = framework.name.startsWith('fetch');

  test(`${warnsOfTrust ? 'ERR_SLUICE_TRUST_PROXY_ALL, once' : 'silent'}: every proxy trusted`, async () => {
    const app = await start(limit, { trustProxy: true });
    await statuses(app, 3, '/ok', fromProxy);
    expect(codes).toEqual(warnsOfTrust ? ['ERR_SLUICE_TRUST_PROXY_ALL'] : []);
  });

  test(`${getIpAlways ? 'silent' : 'ERR_SLUICE_FORWARDED_IGNORED'}: a proxied request while no proxy is trusted; silent when direct`, async () => {
    const direct = await start(limit);
    await statuses(direct, 2, '/ok');
    expect(codes).toEqual([]);
    const app = await start(limit);
    await statuses(app, 3, '/ok', fromProxy);
    expect(codes).toEqual(getIpAlways ? [] : ['ERR_SLUICE_FORWARDED_IGNORED']);
  });

  // Fastify 5 (and Nest on it) does not apply a hop count to X-Forwarded-For: every client behind the
  // proxy would share one limit. Where it is applied, the setting is right and nothing is said.
  test('one proxy trusted by a hop count: applied in silence, or ERR_SLUICE_TRUST_PROXY_IGNORED', async () => {
    const app = await start({ limit: 1, window: '1m' }, { trustProxy: 1 });
    expect((await get(app, '/ok', { 'x-forwarded-for': '203.0.113.9' })).status).toBe(200);
    const other = await get(app, '/ok', { 'x-forwarded-for': '203.0.113.10' });
    if (other.status === 200) expect(codes).toEqual([]);
    else {
      expect(other.status).toBe(429);
      expect(codes).toContain('ERR_SLUICE_TRUST_PROXY_IGNORED');
    }
  });
}

import { checkTrustProxy, WarningCodes } from '@sluice/core';

/** A Fastify instance as checkTrustProxy reads it: its version, and its options under Fastify's symbol. */
function fastifyOf(version: string, trustProxy: unknown): object {
  return { version, [Symbol('fastify.options')]: { trustProxy } };
}

/** The warnings one limiter gives for `app`; `on: false`, a limiter that has them turned off. */
function warnings(app: unknown, on = true): string[] {
  const codes: string[] = [];
  checkTrustProxy(app, { warn: (code) => on && codes.push(code) > 0 });
  return codes;
}

// Fastify 5.12.1 stopped applying a numeric trustProxy (a hop count); earlier versions apply it. Nest
// 11's platform-fastify brought Fastify 5.11, where the warning said "not applied" of a count that was.
describe('a Fastify hop count', () => {
  it.each(['4.29.1', '5.0.0', '5.11.3', '5.12.0'])('is applied by Fastify %s: no warning', (version) => {
    expect(warnings(fastifyOf(version, 1))).toEqual([]);
  });

  it.each(['5.12.1', '5.12.8', '5.13.0', '6.0.0'])('is not applied by Fastify %s: a warning', (version) => {
    expect(warnings(fastifyOf(version, 2))).toEqual([WarningCodes.TRUST_PROXY_IGNORED]);
  });

  it('trustProxy: true trusts every client, on any version', () => {
    expect(warnings(fastifyOf('5.11.3', true))).toEqual([WarningCodes.TRUST_PROXY_ALL]);
  });

  // 6cc09fa warned TRUST_PROXY_IGNORED of 0, which trusts nothing.
  it('trustProxy: 0 trusts nothing: no warning', () => {
    expect(warnings(fastifyOf('5.13.0', 0))).toEqual([]);
  });
});

// 6cc09fa marked an app told as soon as one limiter looked at it, even one with the warning off by
// `validate`: the limiters after it on that app stayed silent.
it('an app is told by the first limiter that has the warning on', () => {
  const app = fastifyOf('5.13.0', true);
  expect(warnings(app, false)).toEqual([]);
  expect(warnings(app)).toEqual([WarningCodes.TRUST_PROXY_ALL]);
  expect(warnings(app)).toEqual([]);
});

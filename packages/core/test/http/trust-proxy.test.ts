import { checkTrustProxy, WarningCodes } from '@sluice/core';

/** A Fastify instance as checkTrustProxy reads it: its version, and its options under Fastify's symbol. */
function fastifyOf(version: string, trustProxy: unknown): object {
  return { version, [Symbol('fastify.options')]: { trustProxy } };
}

function warnings(app: unknown): string[] {
  const codes: string[] = [];
  checkTrustProxy(app, { warn: (code) => void codes.push(code) });
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
});

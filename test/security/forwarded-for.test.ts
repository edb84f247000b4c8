import { expectOnlyWarnings } from '../support/warnings.js';
import { FRAMEWORKS, type Server, statuses, type Trust } from './servers.js';

// Spoofed X-Forwarded-For and trust proxy = true are what these cases try: their warnings are expected, captured.
expectOnlyWarnings('ERR_SLUICE_FORWARDED_IGNORED', 'ERR_SLUICE_TRUST_PROXY_ALL');

/**
 * A client controls every X-Forwarded-For entry left of what its trusted proxies appended. Only the
 * hops the framework is told to trust may move the subject: with trust off the header is ignored
 * entirely; with trust on, rotating the entries a client wrote never escapes its limit, while the
 * address a trusted proxy appended does decide who is limited.
 */
const LIMIT = 2;
const limited = { limit: LIMIT, window: '1m' };
const xff = (value: string) => ({ 'x-forwarded-for': value });
/** Spoofed entries an attacker writes itself, a new one on every request. */
const spoofs = (n: number, real: string) =>
  Array.from({ length: n }, (_, i) => xff(`10.${i}.${i}.${i}, 203.0.113.${i + 1}, ${real}`));

describe.each(FRAMEWORKS)('spoofed X-Forwarded-For on $name', (framework) => {
  let server: Server;
  const serve = async (trust: Trust) => {
    server = await framework.serve([limited], trust);
  };
  afterEach(() => server.close());

  it('trust off: no X-Forwarded-For value changes the subject', async () => {
    await serve(false);
    const rotating = Array.from({ length: 6 }, (_, i) =>
      xff(i % 2 ? `198.51.100.${i}` : `2001:db8::${i}, 1.1.1.${i}`),
    );
    expect(await statuses(server, rotating)).toEqual([200, 200, 429, 429, 429, 429]);
  });

  it('one trusted proxy: only the entry it appended counts', async () => {
    // Trust given as the proxy's address: Fastify 5 reads a hop count differently from Express and
    // Fastify 4 (request.ip stays the socket's), and what the framework calls the client is its call.
    await serve(['127.0.0.1', '::ffff:127.0.0.1']);
    expect(await statuses(server, spoofs(4, '192.0.2.7'))).toEqual([200, 200, 429, 429]);
    // Another client behind the same proxy is another subject.
    expect(await statuses(server, [xff('192.0.2.7, 192.0.2.8')])).toEqual([200]);
  });

  it('a chain of trusted proxies: the first untrusted hop from the right is the client', async () => {
    // Loopback (this test's connection) and an internal proxy range are trusted; nothing else.
    await serve(['127.0.0.1', '::ffff:127.0.0.1', '10.0.0.0/8']);
    const chain = (spoof: string, internal: string) => xff(`${spoof}, 192.0.2.7, ${internal}`);
    expect(
      await statuses(server, [
        chain('1.1.1.1', '10.0.0.2'),
        chain('2.2.2.2', '10.9.9.9'),
        chain('3.3.3.3', '10.0.0.3'),
      ]),
    ).toEqual([200, 200, 429]);
    // An untrusted hop at the right end is itself the client: what it claims to its left is ignored.
    expect(await statuses(server, [xff('192.0.2.7, 198.51.100.1'), xff('192.0.2.8, 198.51.100.1')])).toEqual([
      200, 200,
    ]);
    expect(await statuses(server, [xff('192.0.2.9, 198.51.100.1')])).toEqual([429]);
  });

  it('trust on for every hop: the leftmost entry is the client, as configured', async () => {
    // What "trust everything" means, stated so nobody mistakes it for safe behind an open edge.
    await serve(true);
    expect(
      await statuses(server, [xff('192.0.2.1'), xff('192.0.2.2'), xff('192.0.2.1'), xff('192.0.2.1')]),
    ).toEqual([200, 200, 200, 429]);
  });
});

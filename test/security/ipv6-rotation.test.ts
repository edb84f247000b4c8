import { FRAMEWORKS, type Server, statuses } from './servers.js';

/**
 * An IPv6 client usually holds a whole /64 and can pick a new address for every request. Grouped by
 * subnet, rotation inside it stays one subject; the next network over is someone else. Addresses
 * arrive as a trusted proxy (loopback) reports them.
 */
const LOOPBACK = ['127.0.0.1', '::ffff:127.0.0.1'];
const from = (ip: string) => ({ 'x-forwarded-for': ip });
/** Ten addresses of 2001:db8:1:2::/64, every interface identifier different. */
const hex = (n: number) => (n % 65536).toString(16);
const rotation = Array.from({ length: 10 }, (_, i) =>
  from(`2001:db8:1:2:${hex(i * 7919)}:${hex(i * 104729)}:beef:${hex(i + 1)}`),
);

describe.each(FRAMEWORKS)('IPv6 rotation on $name', (framework) => {
  let server: Server;
  afterEach(() => server.close());

  it('ten addresses of one /64 share one limit; the next /64 has its own', async () => {
    server = await framework.serve([{ limit: 3, window: '1m' }], LOOPBACK);
    expect(await statuses(server, rotation)).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
    expect(await statuses(server, [from('2001:db8:1:3::1'), from('[2001:db8:1:2::99]')])).toEqual([200, 429]);
  });

  it('ipv6Subnet: 56 groups the /64s of one customer allocation', async () => {
    server = await framework.serve([{ limit: 2, window: '1m', ipv6Subnet: 56 }], LOOPBACK);
    const allocation = ['2001:db8:1:200::1', '2001:db8:1:2ff::1', '2001:db8:1:2aa:1:2:3:4'].map(from);
    expect(await statuses(server, allocation)).toEqual([200, 200, 429]);
    expect(await statuses(server, [from('2001:db8:1:300::1')])).toEqual([200]);
  });

  it('an IPv4-mapped address is its IPv4 address: no second budget', async () => {
    server = await framework.serve([{ limit: 2, window: '1m' }], LOOPBACK);
    const forms = ['203.0.113.5', '::ffff:203.0.113.5', '::ffff:cb00:7105', '203.0.113.5'].map(from);
    expect(await statuses(server, forms)).toEqual([200, 200, 429, 429]);
  });
});

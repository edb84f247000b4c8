import { isIPv4, isIPv6 } from 'node:net';

/**
 * Client addresses as subjects. Total over strings: anything that is not an address is kept as it
 * is (the key encoding bounds its length), so no input throws.
 */

/** Strips what may surround an address: brackets and an IPv6 zone (`[fe80::1%eth0]`). */
function unwrap(ip: string): string {
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  return zone > 0 ? s.slice(0, zone) : s;
}

/** Eight 16-bit groups of a valid IPv6 address (`isIPv6` already said yes). */
function groups(ip: string): number[] {
  let text = ip;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    // An embedded IPv4 tail (::ffff:1.2.3.4) becomes the last two groups.
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  const head = halves[0] ? halves[0].split(':').map((g) => Number.parseInt(g, 16)) : [];
  const rest = halves.length > 1 && halves[1] ? halves[1].split(':').map((g) => Number.parseInt(g, 16)) : [];
  rest.push(...tail);
  const zeros = 8 - head.length - rest.length;
  return [...head, ...new Array<number>(Math.max(zeros, 0)).fill(0), ...rest];
}

/** True for `::ffff:0:0/96`, the IPv4-mapped addresses. */
function isMapped(g: readonly number[]): boolean {
  return g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;
}

/**
 * The address a client is limited under: IPv4 as is; IPv4-mapped IPv6 as its IPv4; other IPv6 as the
 * network of its first `subnet` bits (`2001:db8:1:2::/64`), or the full canonical address when
 * `subnet` is false; anything else unchanged.
 */
export function clientAddress(ip: string, subnet: number | false): string {
  if (isIPv4(ip)) return ip;
  const bare = unwrap(ip);
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return ip;
  const g = groups(bare);
  if (isMapped(g)) return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  if (subnet === false || subnet >= 128) return g.map((x) => x.toString(16)).join(':');
  for (let i = 0; i < 8; i++) {
    const keep = Math.min(Math.max(subnet - i * 16, 0), 16);
    g[i] = keep === 0 ? 0 : g[i]! & (0xffff << (16 - keep)) & 0xffff;
  }
  const used = Math.ceil(subnet / 16);
  return `${g
    .slice(0, used)
    .map((x) => x.toString(16))
    .join(':')}${used < 8 ? '::' : ''}/${subnet}`;
}

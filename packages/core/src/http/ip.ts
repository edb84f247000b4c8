import { isIP, isIPv4, isIPv6 } from './ip-syntax.js';

/**
 * Client addresses as subjects. Total over strings: anything that is not an address is kept as it
 * is (the key encoding bounds its length), so no input throws.
 */

const MAPPED = /^::ffff:/i;
/**
 * An address with the client's port, as some proxies write X-Forwarded-For (Azure Application
 * Gateway: `203.0.113.7:51000`) and RFC 7239 writes `for=`: IPv4 (or IPv4-mapped, `::ffff:` and all)
 * with `:port`, IPv6 in brackets.
 */
const WITH_PORT = /^(?:((?:::ffff:)?\d{1,3}(?:\.\d{1,3}){3})|\[([^\]]+)\]):\d{1,5}$/i;

/** The longest part of an address (or what was given as one) a message quotes. */
const QUOTED_CHARS = 40;

/**
 * An address (or what was given as one, or a list entry written as one), as a message shows it:
 * quoted, and only its start with its length when long. An address is no secret, so it may be shown.
 */
export function quoted(entry: string): string {
  if (entry.length <= QUOTED_CHARS) return JSON.stringify(entry);
  return `${JSON.stringify(entry.slice(0, QUOTED_CHARS)).slice(0, -1)}…" (${entry.length} characters)`;
}

/** Strips what may surround an address: brackets and an IPv6 zone (`[fe80::1%eth0]`). */
function unwrap(ip: string): string {
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  return zone > 0 ? s.slice(0, zone) : s;
}

/** A hex digit's value (the address is already known to be valid IPv6). */
function hex(code: number): number {
  return code <= 57 ? code - 48 : (code | 32) - 87;
}

/** Eight 16-bit groups of a valid IPv6 address (`isIPv6` already said yes); one pass, no splitting. */
function groups(ip: string): number[] {
  const head: number[] = [];
  const tail: number[] = [];
  let into = head;
  let value = 0;
  let digits = 0;
  let i = 0;
  if (ip.charCodeAt(0) === 58 && ip.charCodeAt(1) === 58) {
    into = tail;
    i = 2;
  }
  for (; i < ip.length; i++) {
    const code = ip.charCodeAt(i);
    if (code === 58) {
      into.push(value);
      value = 0;
      digits = 0;
      if (ip.charCodeAt(i + 1) === 58) {
        into = tail;
        i++;
      }
    } else if (code === 46) {
      // An embedded IPv4 tail (::ffff:1.2.3.4) is the last two groups.
      const [a, b, c, d] = ip
        .slice(ip.lastIndexOf(':') + 1)
        .split('.')
        .map(Number) as number[];
      into.push((a! << 8) | b!, (c! << 8) | d!);
      digits = 0;
      break;
    } else {
      value = value * 16 + hex(code);
      digits++;
    }
  }
  if (digits > 0) into.push(value);
  const out = head;
  for (let k = head.length + tail.length; k < 8; k++) out.push(0);
  for (const g of tail) out.push(g);
  return out;
}

/** True for `::ffff:0:0/96`, the IPv4-mapped addresses. */
function isMapped(g: readonly number[]): boolean {
  return g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;
}

/**
 * The address a client is limited under: IPv4 as is; IPv4-mapped IPv6 as its IPv4; other IPv6 as the
 * network of its first `subnet` bits (`2001:db8:1:2::/64`), or the full canonical address when
 * `subnet` is false; an address written with a port as that address; anything else unchanged.
 */
export function clientAddress(ip: string, subnet: number | false): string {
  return addressOf(ip, subnet) ?? ip;
}

/** `clientAddress`, or undefined when `ip` is no IP address (with or without a port). */
export function addressOf(ip: string, subnet: number | false): string | undefined {
  if (isIPv4(ip)) return ip;
  // The common case first: an IPv4 client on a dual-stack socket.
  if (MAPPED.test(ip)) {
    const v4 = ip.slice(7);
    if (isIPv4(v4)) return v4;
  }
  const bare = unwrap(ip);
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) {
    const port = WITH_PORT.exec(ip);
    // Only an address with a port: `[1.2.3.4:5]:6` and the like are nothing.
    const inner = port?.[1] ?? port?.[2];
    return inner !== undefined && isIP(unwrap(inner)) !== 0 ? addressOf(inner, subnet) : undefined;
  }
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

import { BlockList, isIP, isIPv4 } from 'node:net';
import { describeValue, ErrorCodes } from '../errors.js';
import { fail } from '../options.js';
import { clientAddress } from './ip.js';

/**
 * `allowList` / `denyList`, parsed. Entries are typed by their form (API.md r2): an IP address or a
 * CIDR range matches the client address only, any other entry the subject only (a verified or custom
 * subject, or the raw key or token before it is hashed). So a client cannot list itself by sending an
 * allow-listed address as its API key.
 */
export type ListConfig<Req> =
  | {
      /** The address and range entries; undefined when there are none. */
      readonly addresses: BlockList | undefined;
      /** The other entries; undefined when there are none. */
      readonly subjects: ReadonlySet<string> | undefined;
      readonly test?: undefined;
    }
  | { readonly test: (req: Req, subject: string | undefined) => unknown };

/** Only the characters of an IPv4 address, with a dot: meant as one. */
const IPV4_LIKE = /^[\d.]*\.[\d.]*$/;
/** Only the characters of an IPv6 address, with two colons: meant as one. */
const IPV6_LIKE = /^\[?[\da-f:.]*:[\da-f.]*:[\da-f:.]*(%[^\]]*)?\]?$/i;

/** An entry written as an address or a range (whether valid or not), as opposed to a subject. */
function meantAsAddress(entry: string): boolean {
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  return IPV4_LIKE.test(address) || IPV6_LIKE.test(address);
}

/** Adds an address or CIDR entry to `addresses`; a malformed one is a configuration error. */
function addAddress(addresses: BlockList, entry: string, option: string): void {
  const slash = entry.indexOf('/');
  const address = clientAddress(slash < 0 ? entry : entry.slice(0, slash), false);
  const family = isIP(address);
  const prefixText = slash < 0 ? undefined : entry.slice(slash + 1);
  const prefix = prefixText === undefined ? undefined : Number(prefixText);
  const max = family === 4 ? 32 : 128;
  const badPrefix =
    prefix !== undefined && (!/^\d{1,3}$/.test(prefixText!) || !Number.isInteger(prefix) || prefix > max);
  if (family === 0 || badPrefix) {
    fail(
      ErrorCodes.INVALID_OPTION,
      option,
      `${describeValue(entry)} is neither an IP address nor a CIDR range such as '10.0.0.0/8' or '2001:db8::/32'`,
    );
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (prefix === undefined) addresses.addAddress(address, type);
  else addresses.addSubnet(address, prefix, type);
}

/** The list option: an array of entries, or a function; anything else is a configuration error. */
export function parseList<Req>(value: unknown, option: string): ListConfig<Req> | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'function') return { test: value as ListConfig<Req>['test'] & {} };
  if (!Array.isArray(value)) {
    fail(
      ErrorCodes.INVALID_OPTION,
      option,
      `expected an array of strings or a function; got ${describeValue(value)}`,
    );
  }
  let addresses: BlockList | undefined;
  let subjects: Set<string> | undefined;
  // Every index, holes of a sparse array included.
  for (let i = 0; i < value.length; i++) {
    const entry: unknown = value[i];
    if (typeof entry !== 'string' || entry.length === 0) {
      fail(
        ErrorCodes.INVALID_OPTION,
        `${option}[${i}]`,
        `expected a non-empty string; got ${describeValue(entry)}`,
      );
    }
    if (meantAsAddress(entry)) {
      addresses ??= new BlockList();
      addAddress(addresses, entry, `${option}[${i}]`);
    } else {
      subjects ??= new Set();
      subjects.add(entry);
    }
  }
  return { addresses, subjects };
}

/**
 * Whether a list of entries holds this request: its client address (`ip`, as the framework resolved
 * it) in an address or range entry, or its `listed` subject among the other entries.
 */
export function listHolds(
  list: Exclude<ListConfig<unknown>, { test: unknown }>,
  ip: string | undefined,
  listed: string | undefined,
): boolean {
  if (listed !== undefined && list.subjects?.has(listed)) return true;
  const { addresses } = list;
  if (addresses === undefined || !ip) return false;
  const address = clientAddress(ip, false);
  const family = isIP(address);
  if (family === 0) return false;
  return addresses.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}

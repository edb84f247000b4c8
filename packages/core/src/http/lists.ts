import { describeValue, ErrorCodes } from '../errors.js';
import { fail } from '../options.js';
import { AddressList } from './address-list.js';
import { addressOf, clientAddress, quoted } from './ip.js';
import { isIP, isIPv4 } from './ip-syntax.js';

/**
 * `allowList` / `denyList`, parsed. Entries are typed by their form (API.md r2): an IP address or a
 * CIDR range matches the client address only, any other entry the subject only (a verified or custom
 * subject, or the raw key or token before it is hashed). So a client cannot list itself by sending an
 * allow-listed address as its API key. An entry ending in '/' and digits is a range (API.md r3): one
 * whose address part is no address is an error, never a subject entry.
 */
export type ListConfig<Req> =
  | {
      /** The address and range entries; undefined when there are none. */
      readonly addresses: AddressList | undefined;
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

/** Ends in '/' and digits: written as a CIDR range (API.md r3), whatever comes before the '/'. */
const RANGE_SUFFIX = /\/\d+$/;

/** The prefix at which IPv4-mapped IPv6 addresses (::ffff:0:0/96) begin: the IPv4 address follows. */
const MAPPED_PREFIX = 96;

/** An entry as an error message shows it: an address quoted, anything else as any value (a key stays hidden). */
function shown(entry: string): string {
  const bare = entry.trim();
  return meantAsAddress(bare) ? quoted(entry) : describeValue(bare);
}

/** A prefix length from 0 to `max` written in decimal digits; undefined for anything else. */
function prefixOf(text: string, max: number): number | undefined {
  if (!/^\d{1,3}$/.test(text)) return undefined;
  const prefix = Number(text);
  return prefix <= max ? prefix : undefined;
}

/** Throws the configuration error of an entry written as an address that is none. */
function malformed(entry: string, option: string): never {
  return fail(
    ErrorCodes.INVALID_OPTION,
    option,
    `${quoted(entry)} is neither an IP address nor a CIDR range such as '10.0.0.0/8' or '2001:db8::/32'`,
  );
}

/**
 * Throws the configuration error of an entry written as a range whose address part is not an address
 * (`10.0.0.O/8`, `not-an-ip/8`): as a subject entry it would never match the address meant.
 */
function notARange(entry: string, option: string): never {
  return fail(
    ErrorCodes.INVALID_OPTION,
    option,
    `${shown(entry)} is written as a CIDR range (it ends in '/' and digits) but what comes before the '/' is not an IP address; write the range with an IP address, such as '10.0.0.0/8' or '2001:db8::/32' (a subject that ends in '/' and digits is listed with a function instead: (req, subject) => subject === '…')`,
  );
}

/**
 * Throws the configuration error of an address written with a port (`203.0.113.7:51000`): a client's
 * address is matched without its port, so as a subject entry it would never match.
 */
function withPort(entry: string, option: string): never {
  return fail(
    ErrorCodes.INVALID_OPTION,
    option,
    `${quoted(entry)} is an address written with a port; a client is matched by its address alone: write ${quoted(addressOf(entry, false)!)}`,
  );
}

/**
 * Adds an address or CIDR entry to `addresses`; a malformed one is a configuration error. Clients are
 * matched as IPv4 when their address is IPv4-mapped (API.md: it counts as IPv4), so a range written in
 * that form (`::ffff:10.0.0.0/104`, the form a dual-stack socket reports) is added as its IPv4 range
 * (`10.0.0.0/8`), and matches `10.1.2.3` and `::ffff:10.1.2.3` alike.
 */
function addAddress(addresses: AddressList, entry: string, option: string): void {
  const slash = entry.indexOf('/');
  const written = slash < 0 ? entry : entry.slice(0, slash);
  const address = clientAddress(written, false);
  const family = isIP(address);
  if (family === 0) malformed(entry, option);
  const mapped = family === 4 && written.includes(':');
  if (slash < 0) {
    addresses.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
    return;
  }
  const prefix = prefixOf(entry.slice(slash + 1), family === 4 && !mapped ? 32 : 128);
  if (prefix === undefined) malformed(entry, option);
  if (!mapped) {
    addresses.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return;
  }
  if (prefix < MAPPED_PREFIX) {
    fail(
      ErrorCodes.INVALID_OPTION,
      option,
      `${quoted(entry)} is an IPv4-mapped range with a prefix under ${MAPPED_PREFIX}, which reaches past the IPv4-mapped addresses; give a prefix from ${MAPPED_PREFIX} to 128 (::ffff:10.0.0.0/104 is 10.0.0.0/8), or the IPv4 range itself`,
    );
  }
  addresses.addSubnet(address, prefix - MAPPED_PREFIX, 'ipv4');
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
  let addresses: AddressList | undefined;
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
    // A list split from a string on ',' keeps its spaces, and ' 10.0.0.1' is no address: taken as a
    // subject entry it would match nothing, and the address would silently never be listed.
    if (entry.trim() !== entry) {
      fail(
        ErrorCodes.INVALID_OPTION,
        `${option}[${i}]`,
        `${shown(entry)} has whitespace around it; trim each entry (a list split on ',' keeps the spaces)`,
      );
    }
    if (meantAsAddress(entry)) {
      addresses ??= new AddressList();
      addAddress(addresses, entry, `${option}[${i}]`);
    } else if (RANGE_SUFFIX.test(entry)) {
      notARange(entry, `${option}[${i}]`);
    } else if (addressOf(entry, false) !== undefined) {
      withPort(entry, `${option}[${i}]`);
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

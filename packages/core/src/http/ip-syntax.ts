/**
 * `isIP`, `isIPv4` and `isIPv6` with node:net's answers, for runtimes without node:net (workerd
 * without nodejs_compat, Vercel's Edge Runtime). A test compares them with node:net's on generated
 * input.
 */

/** 0 to 255, no leading zero (node:net refuses `01.2.3.4`). */
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)';
const V4 = `(?:${OCTET}\\.){3}${OCTET}`;
const V4_ONLY = new RegExp(`^${V4}$`);
const GROUP = '[\\da-fA-F]{1,4}';

/**
 * IPv6: eight groups, or fewer around one `::`, the last two of which may be an IPv4 address; a zone
 * (`%eth0`) may follow. Built per count of groups before the `::` (0 to 7) rather than in one
 * expression, so each alternative states how many may follow.
 */
function ipv6Pattern(): RegExp {
  const full = `(?:${GROUP}:){6}(?:${GROUP}:${GROUP}|${V4})`;
  const compressed: string[] = [];
  for (let before = 0; before <= 7; before++) {
    const head = before === 0 ? '' : `(?:${GROUP}:){${before - 1}}${GROUP}`;
    const room = 7 - before; // groups the tail may hold
    const tails = [`(?:${GROUP}(?::${GROUP}){0,${room - 1}})?`];
    if (room >= 2) tails.push(`(?:${GROUP}:){0,${room - 2}}${V4}`);
    compressed.push(`${head}::(?:${tails.join('|')})`);
  }
  return new RegExp(`^(?:${full}|${compressed.join('|')})(?:%[\\da-zA-Z\\-.:]+)?$`);
}

const V6_ONLY = ipv6Pattern();

export function isIPv4(input: string): boolean {
  return V4_ONLY.test(input);
}

export function isIPv6(input: string): boolean {
  return V6_ONLY.test(input);
}

/** 4, 6, or 0 for anything else. */
export function isIP(input: string): 0 | 4 | 6 {
  if (isIPv4(input)) return 4;
  return isIPv6(input) ? 6 : 0;
}

import { AddressList } from './address-list.js';
import { clientAddress } from './ip.js';
import { isIP } from './ip-syntax.js';

/**
 * What Express calls 'loopback, linklocal, uniquelocal' (proxy-addr's named subnets): addresses a
 * client on the Internet cannot connect from, so a peer among them is a proxy of your own network.
 */
const PRIVATE = new AddressList();
for (const [network, prefix] of [
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::1', 128],
  ['fe80::', 10],
  ['fc00::', 7],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Whether `ip` is loopback, link-local or unique-local (IPv4-mapped counts as IPv4); false for a non-address. */
export function isPrivateAddress(ip: string): boolean {
  const address = clientAddress(ip, false);
  const family = isIP(address);
  return family !== 0 && PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The client address when only proxies on a private network are trusted: from the connection's peer,
 * each X-Forwarded-For entry from the right is taken while the hop before it is private, as Express
 * does with `trust proxy` 'loopback, linklocal, uniquelocal'. A client that connects from a public
 * address is its peer, whatever it writes; behind your proxy, it is the entry your proxy appended.
 */
export function forwardedByPrivateProxies(
  peer: string | undefined,
  forwardedFor: string | undefined,
): string | undefined {
  if (peer === undefined || forwardedFor === undefined) return peer;
  const hops = forwardedFor.split(',');
  let client = peer;
  for (let i = hops.length - 1; i >= 0 && isPrivateAddress(client); i--) {
    const hop = hops[i]!.trim();
    // An empty entry names no one: the last proxy stands for the client (one limit, never a fresh one).
    if (hop === '') break;
    client = hop;
  }
  return client;
}

/**
 * A set of addresses and CIDR ranges: what node:net's BlockList did for the lists and the private
 * networks, without node:net. Checked addresses come canonical (`clientAddress(ip, false)`: dotted
 * IPv4, or IPv6 as eight hex groups), so parsing them is splitting; ranges are made canonical once.
 */
import { clientAddress } from './ip.js';

type Family = 'ipv4' | 'ipv6';

interface Range {
  readonly family: Family;
  readonly bits: Uint8Array;
  readonly prefix: number;
}

/** The address's bytes: 4 for IPv4, 16 for IPv6 (canonical forms only). */
function bytesOf(address: string, family: Family): Uint8Array {
  if (family === 'ipv4') return Uint8Array.from(address.split('.'), Number);
  const out = new Uint8Array(16);
  const groups = address.split(':');
  for (let i = 0; i < 8; i++) {
    const group = Number.parseInt(groups[i] || '0', 16);
    out[i * 2] = group >> 8;
    out[i * 2 + 1] = group & 255;
  }
  return out;
}

/** Whether the first `prefix` bits of `a` and `b` are equal. */
function samePrefix(a: Uint8Array, b: Uint8Array, prefix: number): boolean {
  const whole = prefix >> 3;
  for (let i = 0; i < whole; i++) if (a[i] !== b[i]) return false;
  const rest = prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (a[whole]! & mask) === (b[whole]! & mask);
}

export class AddressList {
  private readonly ranges: Range[] = [];

  addAddress(address: string, family: Family): void {
    this.addSubnet(address, family === 'ipv4' ? 32 : 128, family);
  }

  addSubnet(network: string, prefix: number, family: Family): void {
    this.ranges.push({ family, bits: bytesOf(clientAddress(network, false), family), prefix });
  }

  check(address: string, family: Family): boolean {
    const bits = bytesOf(address, family);
    return this.ranges.some((r) => r.family === family && samePrefix(r.bits, bits, r.prefix));
  }
}

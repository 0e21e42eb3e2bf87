import { isIPv6 } from 'node:net';
import type { Principal } from '../access/principal';

/**
 * Whose allowance an operation spends (the rate limit, the APQ quota) and whose live work it is (the subscription
 * caps): the user (whichever of their sessions or app tokens it came with, else
 * signing in again would mint a fresh bucket), the merchant key, or — for anyone not signed in, including callers
 * with a bad token (else inventing tokens would mint fresh buckets) — the client's address, asked for only then
 * (reading a socket's peer address is a system call).
 */
export function principalKey(principal: Principal, remoteAddress: () => string | undefined): string {
  switch (principal.kind) {
    case 'user':
      return `user:${principal.userId}`;
    case 'merchant':
      return `merchant:${principal.keyId}`;
    default:
      return `ip:${addressKey(remoteAddress())}`;
  }
}

/** IPv4-mapped addresses are IPv4; an IPv6 client is keyed by its /64, since one host is usually given a whole /64. */
export function addressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...headParts, ...Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts] : headParts;
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, IPv4-mapped loopback and "localhost". */
export function isLoopbackHost(host: string): boolean {
  const address = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (address === 'localhost') return true;
  if (isIP(address) === 4) return address.startsWith('127.');
  if (isIP(address) === 6) {
    const lower = address.toLowerCase();
    return lower === '::1' || lower.startsWith('::ffff:127.');
  }
  return false;
}

/**
 * Compares a presented token with the expected one in constant time. Both are hashed first, so neither the
 * content nor the length of the secret leaks through timing.
 */
export function tokenMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string') return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

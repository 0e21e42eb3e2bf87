import { createHash } from 'node:crypto';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;
/** A S256 challenge is a base64url SHA-256 digest: always 43 characters. */
export const S256_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

import { createHash, randomBytes } from 'node:crypto';

/** RFC 7636: a high-entropy verifier kept server-side, and its S256 challenge sent to the bank. */
export function createPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function randomState(): string {
  return randomBytes(24).toString('base64url');
}

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for provider tokens at rest: a copied database or backup holds nothing that reaches anyone's bank.
 * Stored as `v1.<iv>.<tag>.<ciphertext>` (base64url); the connection id is the associated data, so a ciphertext
 * moved onto another connection's row fails to decrypt instead of lending that connection someone else's bank.
 */
export class TokenCipher {
  /** A key of its own for fingerprints, derived from the token key, so no digest is ever made with the cipher's key. */
  private readonly fingerprintKey: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the token encryption key must be 32 bytes');
    this.fingerprintKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'bankgraph fingerprint v1', 32));
  }

  /**
   * A keyed digest (HMAC-SHA256) of personal data the gateway compares but never shows, such as a holder's name:
   * equal values give equal fingerprints, and a copied database does not let anyone test guesses against them.
   */
  fingerprint(value: string): string {
    return createHmac('sha256', this.fingerprintKey).update(value, 'utf8').digest('base64url');
  }

  encrypt(plaintext: string, connectionId: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(connectionId));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  decrypt(stored: string, connectionId: string): string {
    const [version, iv, tag, ciphertext] = stored.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('unrecognised token ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(connectionId));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

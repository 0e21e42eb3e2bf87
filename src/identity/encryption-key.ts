import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const KEY_FILE_NAME = 'token-encryption.key';

/**
 * The key behind TokenCipher. TOKEN_ENCRYPTION_KEY when set (config.ts checks it is 32 bytes and that production
 * sets it); otherwise the embedded default keeps a generated key in a file beside the SQLite store (or in ./data),
 * so tokens survive a restart without anyone configuring a secret. An in-memory store needs no lasting key.
 */
export function tokenEncryptionKey(configured: Buffer | undefined, storeUrl: string): Buffer {
  if (configured) return configured;
  const file = keyFileFor(storeUrl);
  if (!file) return randomBytes(32);
  try {
    return decodeKeyFile(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(32);
  try {
    // `wx`: two instances starting at once on one data folder must end up with one key, not each its own.
    writeFileSync(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return decodeKeyFile(readFileSync(file, 'utf8'), file);
  }
}

function keyFileFor(storeUrl: string): string | undefined {
  const sqlite = /^sqlite:\/\/(.+)$/.exec(storeUrl)?.[1];
  if (sqlite === ':memory:') return undefined;
  if (sqlite !== undefined) return join(dirname(resolve(sqlite)), KEY_FILE_NAME);
  return resolve('data', KEY_FILE_NAME);
}

function decodeKeyFile(text: string, file: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key; remove it only if no stored bank connection needs it`);
  return key;
}

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Seals sensitive fields (the SSN) for storage: AES-256-GCM under a key derived from WFS_SECRET_KEY,
 * `v1.<iv>.<tag>.<ciphertext>` in base64url. Without WFS_SECRET_KEY a random key is kept in
 * `<dataDir>/secret.key`, readable by its owner only.
 */
export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
}

export function createSealer(secret: string): Sealer {
  const key = createHash('sha256').update(secret, 'utf8').digest();
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), body]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('sealed value: unknown format');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * A sealer made on first use: a process that never seals nor opens anything (a `serve` nobody adds a company
 * through) neither reads nor makes the key file.
 */
export function lazySealer(make: () => Sealer): Sealer {
  let sealer: Sealer | undefined;
  return {
    seal: (plain) => (sealer ??= make()).seal(plain),
    open: (sealed) => (sealer ??= make()).open(sealed),
  };
}

/** WFS_SECRET_KEY, or the key file under the data directory (made on first use, mode 0600). */
export function secretKeyOf(opts: { secretKey?: string; dataDir: string }): string {
  return opts.secretKey ?? keyFile(opts.dataDir, 'secret.key');
}

/** WFS_PERSONAL_DATA_KEY, or `<dataDir>/personal-data.key` (made on first use, mode 0600): the hash policy's key. */
export function personalDataKeyOf(opts: { personalDataKey?: string; dataDir: string }): string {
  return opts.personalDataKey ?? keyFile(opts.dataDir, 'personal-data.key');
}

/** The key kept in `<dataDir>/<name>`, made on first use, readable by its owner only. */
function keyFile(dataDir: string, name: string): string {
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process made it first: theirs is the key.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
  chmodSync(file, 0o600);
  return key;
}

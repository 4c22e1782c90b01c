import { createHash, hash } from 'node:crypto';

/** First 32 hex digits of sha-256: one-shot `crypto.hash` where Node has it (20.12+), else createHash. */
export const sha256Hex32: (text: string) => string =
  typeof hash === 'function'
    ? (text) => hash('sha256', text, 'hex').slice(0, 32)
    : (text) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** Hex sha-256 of bytes, one-shot likewise. */
export const sha256Hex: (bytes: Uint8Array) => string =
  typeof hash === 'function'
    ? (bytes) => hash('sha256', bytes, 'hex')
    : (bytes) => createHash('sha256').update(bytes).digest('hex');

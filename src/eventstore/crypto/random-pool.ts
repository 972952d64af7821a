import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for data keys and nonces, drawn from one buffer filled by the CSPRNG a few hundred
 * draws at a time: each randomBytes() call costs a trip into the native layer (~7 µs), as much as
 * the AES work it feeds, and a send draws three (its key, the key's wrapping nonce, the seal's
 * nonce). Every byte is handed out once, as a copy, and zeroed in the pool when taken, so no key
 * shares memory with the pool or stays in it after use.
 */
const POOL_BYTES = 16 * 1024;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

export function randomSlice(length: number): Buffer {
  if (!Number.isInteger(length) || length < 1) throw new Error(`random length must be a positive integer, got ${length}`);
  if (length > POOL_BYTES / 4) return randomFillSync(Buffer.alloc(length));
  if (offset + length > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = Buffer.allocUnsafe(length);
  pool.copy(out, 0, offset, offset + length);
  pool.fill(0, offset, offset + length);
  offset += length;
  return out;
}

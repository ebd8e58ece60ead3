/**
 * The byte layout of one WAL record. All integers little-endian:
 *
 *   [0, 4)      u32  payload length
 *   [4, 8)      u32  CRC-32C over bytes [0, 4) and [8, 16 + length): length, seq and payload
 *   [8, 16)     u64  sequence number
 *   [16, ...)        payload
 *
 * The CRC covers the length, so a torn or garbage length is caught rather than trusted, and
 * the seq, so a record cannot be replayed under another number.
 */
import { crc32c } from './crc32c.js';

/** Bytes before the payload. */
export const FRAME_HEADER_BYTES = 16;

/** The largest payload a frame can describe (its length is a u32). */
export const MAX_FRAME_PAYLOAD = 0xffff_ffff;

/** One record as framed on disk: header and payload in one buffer. */
export function encodeFrame(seq: bigint, payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeBigUInt64LE(seq, 8);
  frame.set(payload, FRAME_HEADER_BYTES);
  frame.writeUInt32LE(frameCrc(frame, 0, payload.length), 4);
  return frame;
}

/** The CRC a frame starting at `buf[start]` with a `length`-byte payload should carry. */
export function frameCrc(buf: Uint8Array, start: number, length: number): number {
  return crc32c(buf, crc32c(buf, 0, start, start + 4), start + 8, start + FRAME_HEADER_BYTES + length);
}

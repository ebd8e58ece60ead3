/**
 * The miner's on-disk frame: `[u32 length][u32 crc32][payload]`, little-endian, as the chain log
 * (`blocks.log`, `checkpoint`) and the header archive (`headers.log`) write them.
 */
import type { FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

export const FRAME_HEADER = 8;

/** `payload` framed. */
export function frameOf(payload: Uint8Array): Buffer {
  const frame = Buffer.alloc(FRAME_HEADER + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(payload), 4);
  frame.set(payload, FRAME_HEADER);
  return frame;
}

/** The frame at `at` of a file of `total` bytes: its payload, or why it is no frame (a torn or corrupt tail). */
export async function readFrame(
  fh: FileHandle,
  at: number,
  total: number,
): Promise<{ payload: Buffer } | { defect: string }> {
  if (total - at < FRAME_HEADER) return { defect: `a frame header of ${total - at} bytes` };
  const header = Buffer.alloc(FRAME_HEADER);
  await fh.read(header, 0, FRAME_HEADER, at);
  const len = header.readUInt32LE(0);
  if (total - at - FRAME_HEADER < len)
    return { defect: `a frame of ${len} bytes with ${total - at - FRAME_HEADER} left` };
  const payload = Buffer.alloc(len);
  await fh.read(payload, 0, len, at + FRAME_HEADER);
  if (crc32(payload) !== header.readUInt32LE(4)) return { defect: 'a frame whose checksum does not match' };
  return { payload };
}

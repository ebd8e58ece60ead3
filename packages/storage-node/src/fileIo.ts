/** Small positional-I/O helpers over fs.promises, shared by the WAL and the checkpoint store. */
import type { FileHandle } from 'node:fs/promises';

/** Writes every byte of `bufs`, in order, starting at file offset `position` (short writes are resumed). */
export async function writeAll(
  fh: FileHandle,
  bufs: readonly Uint8Array[],
  position: number,
): Promise<number> {
  let pending = bufs.filter((b) => b.length > 0);
  let pos = position;
  while (pending.length > 0) {
    const { bytesWritten } = await fh.writev(pending, pos);
    if (bytesWritten <= 0) throw new Error(`writev wrote ${bytesWritten} bytes at offset ${pos}`);
    pos += bytesWritten;
    let n = bytesWritten;
    let k = 0;
    while (k < pending.length && n >= pending[k].length) n -= pending[k++].length;
    pending = pending.slice(k);
    if (n > 0) pending[0] = pending[0].subarray(n);
  }
  return pos - position;
}

/**
 * Reads exactly `length` bytes at file offset `position` into `buf[offset...]`.
 * Returns false when the file ends first.
 */
export async function readExactly(
  fh: FileHandle,
  buf: Uint8Array,
  offset: number,
  length: number,
  position: number,
): Promise<boolean> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, offset + done, length - done, position + done);
    if (bytesRead === 0) return false;
    done += bytesRead;
  }
  return true;
}

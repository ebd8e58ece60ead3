/** Durable directory entries: what every role that renames or creates files on disk shares. */
import { open } from 'node:fs/promises';

/**
 * fsync a directory, so that files created, renamed or unlinked in it survive a power loss: a
 * rename is atomic, but until the directory is synced a crash may still find the old entry.
 * Windows cannot open a directory for syncing; there, metadata is journalled by NTFS.
 */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The process's malloc heap, from the C++ addon every role can load: glibc keeps the pages a
 * burst of frees leaves in the middle of its heap resident (free() only gives back the heap's
 * top), so a role whose JS thread allocates and drops native memory in waves (gRPC messages'
 * buffers, revm engines) sees its RSS ratchet up to each new high water over a flat live heap.
 * `malloc_trim(0)` hands those pages back.
 */
import { loadNative } from './loadNative.js';

/**
 * Gives the free pages of every malloc arena back to the kernel (glibc's `malloc_trim(0)`, in a
 * worker thread): true if any were, false if none or not glibc; undefined at once when the addon
 * is not built here.
 */
export function trimNativeHeap(): Promise<boolean> | undefined {
  return loadNative().binding?.mallocTrim();
}

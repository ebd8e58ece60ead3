/**
 * A region as a file every process on the host can map: the storage node creates it (sized,
 * zeroed, mapped read-write) and clients map it read-only. Node can't mmap, so the addon does,
 * handing back an external ArrayBuffer over the mapping.
 *
 * A region file is never shrunk or rewritten in place while mapped (a shrunk file would fault
 * its readers): a node re-creating its region writes a new file and renames it over the old
 * one, so a reader still mapping the old one reads a stale but intact region until it re-maps.
 */
import { open, rename, rm } from 'node:fs/promises';
import { loadNative, nativeBinding, type VerbsInfo } from './loadNative.js';
import { fromAddonError, RdmaError, RdmaErrorCode } from './rdmaError.js';
import { HEADER_BYTES } from './regionLayout.js';

export class SharedRegion {
  private open = true;

  private constructor(
    readonly path: string,
    readonly handle: number,
    /** The whole mapping; detached (length 0) after close(). */
    readonly bytes: Uint8Array,
    readonly writable: boolean,
  ) {}

  /** Whether the addon is built here (shared memory needs it). */
  static available(): boolean {
    return loadNative().binding !== undefined;
  }

  /**
   * A new zeroed region file of `bytes` at `path` (replacing any old one by rename), mapped
   * read-write.
   */
  static async create(path: string, bytes: number): Promise<SharedRegion> {
    const b = nativeBinding();
    if (!Number.isSafeInteger(bytes) || bytes < HEADER_BYTES)
      throw new RdmaError(
        RdmaErrorCode.RegionTooSmall,
        `a region needs at least ${HEADER_BYTES} B, asked ${bytes}`,
      );
    const tmp = `${path}.${process.pid}.tmp`;
    const fh = await open(tmp, 'w', 0o644);
    try {
      await fh.truncate(bytes);
    } finally {
      await fh.close();
    }
    let mapped: { handle: number; buffer: ArrayBuffer };
    try {
      mapped = await b.mapFile(tmp, true, bytes);
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw fromAddonError(e);
    }
    return new SharedRegion(path, mapped.handle, new Uint8Array(mapped.buffer), true);
  }

  /** Maps an existing region file read-only (all of it). */
  static async map(path: string): Promise<SharedRegion> {
    const b = nativeBinding();
    try {
      const m = await b.mapFile(path, false, 0);
      return new SharedRegion(path, m.handle, new Uint8Array(m.buffer), false);
    } catch (e) {
      throw fromAddonError(e);
    }
  }

  get closed(): boolean {
    return !this.open;
  }

  /** Unmaps; the bytes are detached first (views read as empty), so nothing can touch freed memory. */
  close(): void {
    if (!this.open) return;
    this.open = false;
    try {
      nativeBinding().unmap(this.handle);
    } catch (e) {
      throw fromAddonError(e);
    }
  }
}

/** The verbs build and the devices present, or why RDMA can't be used here. */
export function verbsInfo(): VerbsInfo {
  const l = loadNative();
  if (l.binding === undefined)
    return { built: false, devices: [], reason: `the rdma addon is not built (run npm run build:native)` };
  return l.binding.verbsInfo();
}

/**
 * Throws a RdmaError naming what is missing unless one-sided RDMA reads can run here: the
 * addon, its verbs part (libibverbs-dev and librdmacm-dev at build time), and a device.
 */
export function requireRdma(): VerbsInfo {
  const info = verbsInfo();
  if (!loadNative().binding)
    throw new RdmaError(RdmaErrorCode.NotBuilt, `RDMA reads need the rdma addon: ${info.reason}`);
  if (!info.built)
    throw new RdmaError(
      RdmaErrorCode.NoVerbs,
      `RDMA reads need the addon built with verbs: ${info.reason ?? 'built without them'} (install libibverbs-dev and librdmacm-dev, then npm run build:native)`,
    );
  if (info.devices.length === 0)
    throw new RdmaError(
      RdmaErrorCode.NoDevice,
      `RDMA reads need an RDMA device and ibv_get_device_list lists none${info.reason ? ` (${info.reason})` : ''} (Soft-RoCE: rdma link add rxe0 type rxe netdev <if>)`,
    );
  return info;
}

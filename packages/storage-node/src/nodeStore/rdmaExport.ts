/**
 * The exported region over RDMA: the region file's mapping registered with an RDMA device for
 * remote reads, and a reliable-connected queue pair per client, connected from the numbers the
 * client sends over gRPC (ConnectRdma). After that the node's CPU takes no part in a client's
 * reads: its NIC serves the READs from the registered memory, which the RegionExport keeps
 * current as blocks are applied (a client's walk checks every node's hash, as over shm).
 */
import type { Logger } from '@monsoon/edge';
import { silentLogger } from '@monsoon/edge';
import type { ConnectRdmaRequest, ConnectRdmaResponse } from '@monsoon/protocol';
import { fromAddonError, nativeBinding, type RdmaBinding, requireRdma } from '@monsoon/rdma';
import { StorageError, StorageErrorCode } from '../storageError.js';
import type { RegionExport } from './regionExport.js';

export interface RdmaExportOptions {
  /** The RDMA device (ibv_devices' name, e.g. mlx5_0 or rxe0). */
  device: string;
  /** Queue pairs (clients) at most; one more is refused. */
  maxConnections: number;
}

export const defaultRdmaExportOptions: Omit<RdmaExportOptions, 'device'> = { maxConnections: 256 };

export class RdmaExport {
  private readonly queuePairs: number[] = [];
  private closed = false;

  private constructor(
    readonly opts: RdmaExportOptions,
    private readonly binding: RdmaBinding,
    private readonly dev: number,
    private readonly registered: { rkey: number; addr: bigint; bytes: number },
    private readonly region: RegionExport,
    private readonly log: Logger,
  ) {}

  /**
   * Opens `opts.device` and registers `region`'s mapping with it. Throws a StorageError naming
   * what is missing: a region file (--export-region), the verbs build, or the device.
   */
  static async open(
    opts: Partial<RdmaExportOptions> & { device: string },
    region: RegionExport,
    modules: { logger?: Logger } = {},
  ): Promise<RdmaExport> {
    const o = { ...defaultRdmaExportOptions, ...opts };
    const mapping = region.mapping;
    if (mapping === undefined)
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `--rdma-device ${o.device}: the region must be a file to register (start with --export-region <file|auto>)`,
      );
    let binding: RdmaBinding;
    let dev: number;
    try {
      requireRdma();
      binding = nativeBinding();
      dev = await binding.openDevice(o.device);
    } catch (e) {
      const err = fromAddonError(e) as Error;
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `--rdma-device ${o.device}: ${err.message}`,
        {},
        e,
      );
    }
    let registered: { rkey: number; addr: bigint; bytes: number };
    try {
      registered = binding.registerRegion(dev, mapping.handle);
    } catch (e) {
      binding.closeDevice(dev);
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `--rdma-device ${o.device}: registering the region: ${(fromAddonError(e) as Error).message}`,
        {},
        e,
      );
    }
    const log = modules.logger ?? silentLogger;
    log.info('region registered for RDMA reads', { device: o.device, bytes: registered.bytes });
    return new RdmaExport(o, binding, dev, registered, region, log);
  }

  /** Connects a queue pair of this node to the client's; what the client needs to read. */
  connect(r: ConnectRdmaRequest): ConnectRdmaResponse {
    if (this.closed) throw new StorageError(StorageErrorCode.Closed, 'the RDMA export is closed');
    if (this.queuePairs.length >= this.opts.maxConnections)
      throw new StorageError(
        StorageErrorCode.Unavailable,
        `RDMA connections: at most ${this.opts.maxConnections}, all taken`,
      );
    const qp = this.binding.createQueuePair(this.dev);
    try {
      this.binding.connectQueuePair(qp.handle, r.client, qp.psn);
    } catch (e) {
      this.binding.closeQueuePair(qp.handle);
      throw new StorageError(
        StorageErrorCode.BadArgument,
        `connecting to the client's queue pair ${r.client.qpn}: ${(fromAddonError(e) as Error).message}`,
        {},
        e,
      );
    }
    this.queuePairs.push(qp.handle);
    this.log.info('RDMA reader connected', { clientQpn: r.client.qpn, qpn: qp.qpn });
    return {
      server: { qpn: qp.qpn, lid: qp.lid, gid: qp.gid, psn: qp.psn },
      regionAddr: this.registered.addr,
      rkey: this.registered.rkey,
      regionBytes: BigInt(this.registered.bytes),
      generation: this.region.writer.geometry.generation,
    };
  }

  /** Closes the device: its queue pairs and the region's registration go with it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.binding.closeDevice(this.dev);
  }
}

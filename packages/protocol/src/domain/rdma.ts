/** ConnectRdma: the queue-pair numbers and region keys two peers exchange to read over RDMA. */

/** One side of an RDMA reliable connection: what the other side needs to connect to it. */
export interface RdmaEndpoint {
  /** Queue pair number, 24 bits, not 0. */
  readonly qpn: number;
  /** The port's local identifier, 16 bits (0 on RoCE). */
  readonly lid: number;
  /** The port's GID (index 0), 16 bytes. */
  readonly gid: Uint8Array;
  /** First packet sequence number, 24 bits. */
  readonly psn: number;
}

export interface ConnectRdmaRequest {
  /** The client's queue pair (in INIT). */
  readonly client: RdmaEndpoint;
}

export interface ConnectRdmaResponse {
  /** The node's queue pair, connected towards the client's. */
  readonly server: RdmaEndpoint;
  /** The region's registered virtual address. */
  readonly regionAddr: bigint;
  /** The region's remote key. */
  readonly rkey: number;
  readonly regionBytes: bigint;
  /** The generation in the region's header. */
  readonly generation: bigint;
}

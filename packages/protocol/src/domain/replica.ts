/** What one storage replica asks another to catch up or join: blocks after a number, a checkpoint. */
import type { BlockRef } from './blockRef.js';

/** GetBlockUpdates: the blocks on the head's chain after `afterNumber`, at most `count`. */
export interface GetBlockUpdatesRequest {
  readonly afterNumber: bigint;
  readonly count: number;
}

/** Each block as the ApplyBlockRequest that applied it, protobuf-encoded, oldest first. */
export interface GetBlockUpdatesResponse {
  readonly blocks: readonly Uint8Array[];
}

/** GetCheckpoint: the state at a block (the head by default), streamed as checkpoint chunks. */
export interface GetCheckpointRequest {
  readonly at: BlockRef;
}

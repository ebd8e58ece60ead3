/** A log as geth writes it (types.Log's JSON), in eth_getLogs, filters, subscriptions and receipts. */
import type { Log } from '@monsoon/execution';
import type { BlockLogs, LogEntry } from './chainEvents.js';
import { hexData, type JsonObject, quantity } from './json.js';

/** Where a log sits: its block, transaction and block-wide index. */
export interface LogPlace {
  readonly blockNumber: bigint;
  readonly blockHash: Uint8Array;
  /** Written when known (geth ≥ 1.16 writes it; receipts here leave it out). */
  readonly blockTimestamp?: bigint;
  readonly transactionHash: Uint8Array;
  readonly transactionIndex: number;
  readonly logIndex: number;
}

/** The JSON of `log` at `place`; `removed` marks a log of a block a reorg took away. */
export function logJson(log: Log, place: LogPlace, removed = false): JsonObject {
  const out: JsonObject = {
    address: hexData(log.address),
    topics: log.topics.map(hexData),
    data: hexData(log.data),
    blockNumber: quantity(place.blockNumber),
    transactionHash: hexData(place.transactionHash),
    transactionIndex: quantity(place.transactionIndex),
    blockHash: hexData(place.blockHash),
  };
  if (place.blockTimestamp !== undefined) out.blockTimestamp = quantity(place.blockTimestamp);
  out.logIndex = quantity(place.logIndex);
  out.removed = removed;
  return out;
}

/** The JSON of a log the chain holds (see LogStore). */
export function entryJson(block: BlockLogs, entry: LogEntry, removed = false): JsonObject {
  return logJson(
    entry.log,
    {
      blockNumber: block.number,
      blockHash: block.hash,
      blockTimestamp: block.timestamp,
      transactionHash: entry.transactionHash,
      transactionIndex: entry.transactionIndex,
      logIndex: entry.logIndex,
    },
    removed,
  );
}

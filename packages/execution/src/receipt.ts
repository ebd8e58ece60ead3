/**
 * Ethereum transaction receipts as a block commits to them (post-Byzantium: a status, not an
 * intermediate state root), their EIP-2718 encoding and the 2048-bit logs bloom.
 */
import { keccak } from '@monsoon/keccak';
import { bigintToBytes, listHeaderLength, writeHeader } from '@monsoon/util';

/** One log (event) a transaction emitted. */
export interface Log {
  /** 20 bytes: the contract that emitted it. */
  readonly address: Uint8Array;
  /** 0–4 topics of 32 bytes. */
  readonly topics: readonly Uint8Array[];
  readonly data: Uint8Array;
}

/** What a block commits to for one transaction. */
export interface Receipt {
  /** EIP-2718 type of the transaction: 0 legacy, 1 EIP-2930, 2 EIP-1559. */
  readonly type: number;
  /** 1 if the transaction succeeded, 0 if it reverted or failed. */
  readonly status: 0 | 1;
  /** Gas used by the block up to and including this transaction. */
  readonly cumulativeGasUsed: bigint;
  readonly logs: readonly Log[];
  /**
   * The logs' bloom ({@link logsBloom}) when whoever made the receipt has it already (revm
   * hashes it as it runs the transaction); computed from `logs` where it is needed otherwise.
   */
  readonly bloom?: Uint8Array;
}

/** Bytes of a logs bloom (2048 bits). */
export const BLOOM_BYTES = 256;

/**
 * The logs bloom of `logs`: for the address and each topic of each log, three bits chosen by
 * the low 11 bits of the first three byte pairs of its keccak256. The bloom of a block is the
 * bloom of all its logs (equivalently, the OR of its receipts' blooms). All hashes in one call.
 */
export function logsBloom(logs: readonly Log[]): Uint8Array {
  const bloom = new Uint8Array(BLOOM_BYTES);
  const items: Uint8Array[] = [];
  for (const log of logs) {
    items.push(log.address);
    for (const t of log.topics) items.push(t);
  }
  if (items.length === 0) return bloom;
  const digests = keccak.keccak256Batch(items);
  for (let i = 0; i < items.length; i++) {
    const d = 32 * i;
    for (let j = 0; j < 6; j += 2) {
      const bit = ((digests[d + j]! << 8) | digests[d + j + 1]!) & 2047;
      bloom[BLOOM_BYTES - 1 - (bit >> 3)]! |= 1 << (bit & 7);
    }
  }
  return bloom;
}

/**
 * The consensus encoding of a receipt (what the receipts trie stores): legacy
 * `rlp([status, cumulativeGasUsed, bloom, logs])`, typed `type ‖ rlp(…)` (EIP-2718), where a
 * log is `[address, [topics…], data]` and status 1 is the byte 0x01, status 0 the empty string.
 * `bloom` defaults to the receipt's own, else {@link logsBloom} of its logs.
 */
export function encodeReceipt(receipt: Receipt, bloom = receipt.bloom): Uint8Array {
  const layout = layoutOf(receipt, bloom);
  const out = new Uint8Array(layout.size);
  writeReceipt(out, 0, receipt, layout);
  return out;
}

/** Chunks EncodedReceipts writes into (a receipt larger than one gets its own). */
const RECEIPT_CHUNK = 64 * 1024;

/**
 * A block's receipts encoded as its transactions are included ({@link encodeReceipt}'s bytes),
 * one after another in shared chunks: until the seal a block then holds an offset per
 * transaction, not its receipt's objects (the logs, their address, topics and data views, the
 * bloom: ~1 KB of the ~6 KB an ERC-20 transfer kept alive until its block's seal, all promoted
 * by scavenges), and the seal neither encodes them nor allocates an array for each.
 */
export class EncodedReceipts {
  private readonly chunks: Uint8Array[] = [];
  private chunk: Uint8Array = EMPTY;
  private pos = 0;
  /** Per receipt: its chunk (index), start and end. */
  private readonly spans: number[] = [];

  /** Encodes `receipt` (the next one of the block). */
  add(receipt: Receipt): void {
    const layout = layoutOf(receipt, receipt.bloom);
    if (this.pos + layout.size > this.chunk.length) {
      this.chunk = new Uint8Array(Math.max(RECEIPT_CHUNK, layout.size));
      this.chunks.push(this.chunk);
      this.pos = 0;
    }
    const end = writeReceipt(this.chunk, this.pos, receipt, layout);
    this.spans.push(this.chunks.length - 1, this.pos, end);
    this.pos = end;
  }

  get length(): number {
    return this.spans.length / 3;
  }

  /** Every receipt's encoding so far, in order (views into the chunks). */
  all(): Uint8Array[] {
    const out = new Array<Uint8Array>(this.length);
    const s = this.spans;
    for (let i = 0; i < out.length; i++)
      out[i] = this.chunks[s[3 * i]!]!.subarray(s[3 * i + 1]!, s[3 * i + 2]!);
    return out;
  }
}

const EMPTY = new Uint8Array(0);

/** What writeReceipt needs to know before writing: sizes, and the bloom (undefined: none, no logs). */
interface Layout {
  readonly size: number;
  readonly payload: number;
  readonly gas: Uint8Array;
  readonly bloom: Uint8Array | undefined;
  /** Per log, the payload of its list; and of the logs' list. */
  readonly logPayloads: readonly number[];
  readonly logsPayload: number;
}

/**
 * The sizes of a receipt's encoding, sized first so it is written in one go: each log's payload
 * kept for its header. What the generic RLP encoder made from nested arrays (a copy of each
 * log's topics and a length walk per list level) cost ten times as much per receipt: it was 7%
 * of a miner's ERC-20 pass at the seal.
 */
function layoutOf(receipt: Receipt, bloom: Uint8Array | undefined): Layout {
  if (!Number.isInteger(receipt.type) || receipt.type < 0 || receipt.type > 0x7f) {
    throw new RangeError(`a receipt type is 0–127 (EIP-2718), found ${receipt.type}`);
  }
  const logs = receipt.logs;
  if (bloom === undefined && logs.length > 0) bloom = logsBloom(logs);
  if (bloom !== undefined && bloom.length !== BLOOM_BYTES)
    throw new RangeError(`a bloom is ${BLOOM_BYTES} bytes, found ${bloom.length}`);
  const gas = bigintToBytes(receipt.cumulativeGasUsed);
  const logPayloads = new Array<number>(logs.length);
  let logsPayload = 0;
  for (let i = 0; i < logs.length; i++) {
    const l = logs[i]!;
    let topics = 0;
    for (const t of l.topics) topics += stringSize(t);
    const p = stringSize(l.address) + listHeaderLength(topics) + topics + stringSize(l.data);
    logPayloads[i] = p;
    logsPayload += listHeaderLength(p) + p;
  }
  // status, gas, bloom (0xb9 0x01 0x00 and 256 bytes), the log list
  const payload = 1 + stringSize(gas) + 3 + BLOOM_BYTES + listHeaderLength(logsPayload) + logsPayload;
  const size = (receipt.type === 0 ? 0 : 1) + listHeaderLength(payload) + payload;
  return { size, payload, gas, bloom, logPayloads, logsPayload };
}

/** Bytes of the RLP string `v` encoded (a single byte under 0x80 is itself). */
function stringSize(v: Uint8Array): number {
  const n = v.length;
  if (n === 1 && v[0]! < 0x80) return 1;
  return listHeaderLength(n) + n; // a string's header is as long as a list's of the same payload
}

/** Writes the RLP string `v` at `pos`; returns the new position. */
function writeString(out: Uint8Array, pos: number, v: Uint8Array): number {
  if (!(v.length === 1 && v[0]! < 0x80)) pos = writeHeader(out, pos, v.length, 0x80);
  out.set(v, pos);
  return pos + v.length;
}

/**
 * Writes a receipt's encoding at `at` in `out` (which must have `layout.size` bytes there,
 * zeros where the bloom goes when it has none: a receipt without logs, most of a block);
 * returns where it ends.
 */
function writeReceipt(out: Uint8Array, at: number, receipt: Receipt, layout: Layout): number {
  const { payload, gas, bloom, logPayloads, logsPayload } = layout;
  let p = at;
  if (receipt.type !== 0) out[p++] = receipt.type;
  p = writeHeader(out, p, payload, 0xc0);
  out[p++] = receipt.status === 1 ? 0x01 : 0x80;
  p = writeString(out, p, gas);
  out[p++] = 0xb9;
  out[p++] = BLOOM_BYTES >> 8;
  out[p++] = BLOOM_BYTES & 0xff;
  if (bloom !== undefined) out.set(bloom, p);
  p += BLOOM_BYTES;
  p = writeHeader(out, p, logsPayload, 0xc0);
  const logs = receipt.logs;
  for (let i = 0; i < logs.length; i++) {
    const l = logs[i]!;
    p = writeHeader(out, p, logPayloads[i]!, 0xc0);
    p = writeString(out, p, l.address);
    let topics = 0;
    for (const t of l.topics) topics += stringSize(t);
    p = writeHeader(out, p, topics, 0xc0);
    for (const t of l.topics) p = writeString(out, p, t);
    p = writeString(out, p, l.data);
  }
  if (p !== at + layout.size)
    throw new Error(`encodeReceipt: wrote ${p - at} bytes, expected ${layout.size}`);
  return p;
}

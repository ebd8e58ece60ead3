/**
 * The chain as this client knows it: the canonical blocks a miner streams (SubscribeBlocks),
 * each checked against its own header (proof of work; transactions root and receipts root
 * recomputed) and against the chain (its parent is the block below it; its difficulty meets the
 * genesis' rule), with
 * their receipts, an index of transactions by hash, and waiters for a transaction's inclusion.
 * A block at a height already held replaces it and everything above (a reorg).
 */
import {
  bytesEqual,
  listItems,
  orderedRoot,
  type RlpSpan,
  readSpan,
  readWhole,
  toHex,
} from '@monsoon/dsm-tree';
import { BLOOM_BYTES, type Log, logsBloom, type Receipt } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  type BlockHeader,
  type BlockWithReceipts,
  checkPow,
  decodeHeader,
  headerHash,
} from '@monsoon/protocol';
import { byteKey, byteKeyAt, bytesToBigint, windowLength } from '@monsoon/util';
import { ClientError, ClientErrorCode } from './clientError.js';

export interface ClientBlock {
  readonly hash: Uint8Array;
  readonly header: BlockHeader;
  readonly transactions: readonly Uint8Array[];
  readonly txHashes: readonly Uint8Array[];
  /**
   * The transactions' hashes as binary strings (byteKey's), in order: what the chain's index and
   * the pool look them up by, made once a block (each made its own from `txHashes` before).
   */
  readonly txKeys: readonly string[];
  readonly receipts: readonly Receipt[];
  readonly logsBloom: Uint8Array;
  /** Bytes of header and transactions (eth_getBlock's `size`, approximately). */
  readonly size: number;
}

export interface TxLocation {
  readonly block: ClientBlock;
  readonly index: number;
}

/**
 * An EIP-2718 receipt back to its fields; throws on anything else. The log fields are views into
 * `b` (clientBlockOf copies them out). Read span by span: a block's receipts were decoded into
 * fresh arrays and copies, the 256-byte bloom of each included, only for the logs to be copied again.
 */
export function decodeReceipt(b: Uint8Array): Receipt {
  const typed = b.length > 0 && b[0]! < 0x7f;
  const type = typed ? b[0]! : 0;
  const whole = readWhole(b, typed ? 1 : 0);
  if (!whole.list) throw new RangeError('receipt: expected a list of 4');
  // The four items read one after another, no array of them and no closure unless there are
  // logs (a receipt a transaction of every block, on every client): ~30% fewer bytes a receipt.
  const end = whole.end;
  const s0 = itemAt(b, whole.dataStart, end);
  const s1 = itemAt(b, s0.end, end);
  const s2 = itemAt(b, s1.end, end);
  const s3 = itemAt(b, s2.end, end);
  if (s3.end !== end) throw new RangeError('receipt: expected a list of 4');
  // Status, bloom and gas read in place (a view each was ~3 objects a receipt, every block).
  const status = scalar(s0, 'status');
  if (scalar(s2, 'bloom').end - s2.dataStart !== BLOOM_BYTES)
    throw new RangeError('receipt bloom: expected 256 bytes');
  if (!s3.list) throw new RangeError('receipt logs: expected a list');
  // Most receipts have no logs: they share one empty list.
  const logs: Log[] = s3.end === s3.dataStart ? NO_LOGS : [];
  if (logs !== NO_LOGS) {
    const bytes = (s: RlpSpan, what: string): Uint8Array => b.subarray(scalar(s, what).dataStart, s.end);
    for (const l of listItems(b, s3)) {
      const f = l.list ? listItems(b, l) : [];
      if (f.length !== 3 || !f[1]!.list)
        throw new RangeError('receipt log: expected [address, topics, data]');
      logs.push({
        address: bytes(f[0]!, 'log address'),
        topics: listItems(b, f[1]!).map((t) => bytes(t, 'log topic')),
        data: bytes(f[2]!, 'log data'),
      });
    }
  }
  const gas = scalar(s1, 'cumulative gas');
  return {
    type,
    status: status.end - status.dataStart === 1 && b[status.dataStart] === 1 ? 1 : 0,
    cumulativeGasUsed: bytesToBigint(b, gas.dataStart, gas.end),
    logs,
  };
}

/** The item of a receipt's list at `pos` (before `end`), or "expected a list of 4" where the list ended. */
function itemAt(b: Uint8Array, pos: number, end: number): RlpSpan {
  if (pos >= end) throw new RangeError('receipt: expected a list of 4');
  return readSpan(b, pos, end);
}

/** The logs of a receipt without any, shared (frozen: nothing may add to it). */
const NO_LOGS = Object.freeze([]) as unknown as Log[];

/** `s`, a byte string of the receipt (read in place), or a RangeError naming `what` for a list. */
function scalar(s: RlpSpan, what: string): RlpSpan {
  if (s.list) throw new RangeError(`receipt ${what}: expected bytes`);
  return s;
}

/** Decodes and checks a streamed block: its proof of work, and its header's roots against its content. */
export function clientBlockOf(b: BlockWithReceipts): ClientBlock {
  const header = decodeHeader(b.headerRlp);
  const hash = headerHash(header, keccak);
  const bad = (why: string): never => {
    throw new ClientError(ClientErrorCode.BadProof, `block #${header.number} ${toHex(hash)}: ${why}`);
  };
  if (!checkPow(header, keccak)) bad(`its proof of work does not meet its difficulty ${header.difficulty}`);
  // Both roots built straight from the sorted keys, hashed in one call each (see orderedRoot).
  if (!bytesEqual(orderedRoot(b.transactions, keccak), header.transactionsRoot))
    bad('transactions do not match its transactions root');
  if (!bytesEqual(orderedRoot(b.receipts, keccak), header.receiptsRoot))
    bad('receipts do not match its receipts root');
  const decoded = b.receipts.map(decodeReceipt);
  const bloom = logsBloom(decoded.flatMap((r) => r.logs));
  return new StreamedBlock(hash, header, b.headerRlp.length, b.transactions, decoded, bloom);
}

/**
 * A streamed block as the chain holds it: its transactions, their hashes and its receipts' log
 * fields copied into one buffer of its own. Decoded, they are views into the streamed message,
 * which a view keeps whole (receipts with their 256-byte blooms included), and a hash of its own
 * costs a buffer each (~240 bytes for 32): a window of a few hundred thousand transactions held
 * ~2x its bytes. The transactions and their hashes are cut out of it only when first asked for
 * (JSON-RPC): every client follows every block, and a view each of ~1,400 transactions and
 * their hashes, a block, was made for nothing but the pool's and the index's keys.
 */
class StreamedBlock implements ClientBlock {
  readonly txKeys: string[];
  readonly receipts: readonly Receipt[];
  readonly size: number;
  /** Hashes at [0, 32n), then the transactions, transaction i's ending at ends[i]; then the logs' fields. */
  private readonly bytes: Uint8Array;
  private readonly ends: Uint32Array;
  private txs: Uint8Array[] | undefined;
  private hashes: Uint8Array[] | undefined;

  constructor(
    readonly hash: Uint8Array,
    readonly header: BlockHeader,
    headerBytes: number,
    txs: readonly Uint8Array[],
    receipts: readonly Receipt[],
    readonly logsBloom: Uint8Array,
  ) {
    const n = txs.length;
    // Every transaction hashed in one native call, not one (and a Buffer) each.
    const digests = n === 0 ? new Uint8Array(0) : keccak.keccak256Batch(txs);
    let txBytes = 0;
    for (const t of txs) txBytes += t.length;
    let logBytes = 0;
    for (const r of receipts)
      for (const l of r.logs) {
        logBytes += l.address.length + l.data.length;
        for (const t of l.topics) logBytes += t.length;
      }
    const bytes = new Uint8Array(32 * n + txBytes + logBytes);
    bytes.set(digests, 0);
    const ends = new Uint32Array(n);
    let at = 32 * n;
    for (let i = 0; i < n; i++) {
      bytes.set(txs[i]!, at);
      at += txs[i]!.length;
      ends[i] = at;
    }
    const copy = (b: Uint8Array): Uint8Array => {
      bytes.set(b, at);
      at += b.length;
      return bytes.subarray(at - b.length, at);
    };
    // A receipt without logs holds no view of the message: kept as decoded, not copied.
    this.receipts = receipts.map((r) =>
      r.logs.length === 0
        ? r
        : {
            ...r,
            logs: r.logs.map((l) => ({
              address: copy(l.address),
              topics: l.topics.map(copy),
              data: copy(l.data),
            })),
          },
    );
    const keys: string[] = new Array(n);
    for (let i = 0; i < n; i++) keys[i] = byteKeyAt(bytes, 32 * i, 32 * i + 32);
    this.txKeys = keys;
    this.bytes = bytes;
    this.ends = ends;
    this.size = headerBytes + txBytes;
  }

  get transactions(): readonly Uint8Array[] {
    if (this.txs === undefined) {
      const n = this.ends.length;
      const txs: Uint8Array[] = new Array(n);
      for (let i = 0, at = 32 * n; i < n; at = this.ends[i++]!)
        txs[i] = this.bytes.subarray(at, this.ends[i]!);
      this.txs = txs;
    }
    return this.txs;
  }

  get txHashes(): readonly Uint8Array[] {
    if (this.hashes === undefined) {
      const n = this.ends.length;
      const hashes: Uint8Array[] = new Array(n);
      for (let i = 0; i < n; i++) hashes[i] = this.bytes.subarray(32 * i, 32 * i + 32);
      this.hashes = hashes;
    }
    return this.hashes;
  }
}

export interface ChainViewOptions {
  /**
   * Canonical blocks kept, the head included (genesis is kept too, for `earliest`): older ones
   * and their transactions are forgotten, so a long run's memory stays flat.
   */
  window: number;
  /**
   * Transactions kept at most (their hashes, receipts and raw bytes: the bulk of what a block
   * costs here). Older blocks go while more are held, down to {@link CHAIN_TX_CAP_FLOOR} blocks:
   * a window counted in blocks alone holds as many bytes as the blocks are full, so its memory
   * rose with the load (a 30-minute soak's clients grew while throughput did).
   */
  maxTransactions: number;
  /**
   * The chain's difficulty rule (ChainRules.minDifficulty, from the genesis): a block below it
   * is refused. The in-process default, 0, takes any.
   */
  minDifficulty: bigint;
}

/** ~4 minutes of blocks at 500 tx/s; at the main job's load, ~250 MiB of a client's heap. */
export const defaultChainViewOptions: ChainViewOptions = {
  window: 512,
  maxTransactions: 131_072,
  minDifficulty: 0n,
};

/**
 * Blocks held whatever `maxTransactions` says (fewer only where `window` is smaller): a reorg
 * replacing a block below the oldest held is refused, and a late client anchors 16 deep.
 */
export const CHAIN_TX_CAP_FLOOR = 64;

/** A transaction's place in the index (ChainView.place): block number's low 15 bits, index's 16. */
const PLACE_INDEX_BITS = 16;
const PLACE_INDEX_MASK = (1 << PLACE_INDEX_BITS) - 1;
const PLACE_BLOCK_SPAN = 1 << 15;
const PLACE_BLOCK_MASK = BigInt(PLACE_BLOCK_SPAN - 1);

export class ChainView {
  readonly opts: ChainViewOptions;
  private readonly canonical: ClientBlock[] = [];
  /** Block 0 once it has left the window. */
  private genesis: ClientBlock | undefined;
  private readonly byHash = new Map<string, ClientBlock>();
  /**
   * Transactions by hash: where each is, as a small integer (see `place`) where it fits, so the
   * index holds no object per transaction (a location object each was one more for every
   * collection to trace, for the tens of thousands of transactions a window holds).
   */
  private readonly txs = new Map<string, number | TxLocation>();
  private readonly waiters = new Map<string, ((l: TxLocation) => void)[]>();
  private readonly headListeners = new Set<(b: ClientBlock) => void>();

  constructor(opts: Partial<ChainViewOptions> = {}) {
    this.opts = { ...defaultChainViewOptions, ...opts };
    for (const [name, v] of [
      ['chain window', this.opts.window],
      ['chain maxTransactions', this.opts.maxTransactions],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 1) {
        throw new ClientError(
          ClientErrorCode.BadArgument,
          `${name}: expected a positive integer, found ${v}`,
        );
      }
    }
  }

  /** Transactions of the held blocks (indexed by hash). */
  get transactionCount(): number {
    return this.txs.size;
  }

  /** Canonical blocks held (genesis included once it has left the window). */
  get size(): number {
    return this.canonical.length + (this.genesis === undefined ? 0 : 1);
  }

  get head(): ClientBlock | undefined {
    return this.canonical.at(-1);
  }

  /** The head, or UNKNOWN_BLOCK if no block has arrived yet. */
  requireHead(): ClientBlock {
    const h = this.head;
    if (h === undefined)
      throw new ClientError(ClientErrorCode.UnknownBlock, 'no chain head yet: is a miner reachable?');
    return h;
  }

  /** The oldest canonical block held (genesis aside). */
  get oldest(): ClientBlock | undefined {
    return this.canonical[0];
  }

  byNumber(n: bigint): ClientBlock | undefined {
    if (n === 0n && this.genesis !== undefined) return this.genesis;
    const first = this.canonical[0];
    if (first === undefined) return undefined;
    return this.canonical[Number(n - first.header.number)];
  }

  block(hash: Uint8Array): ClientBlock | undefined {
    return this.byHash.get(byteKey(hash));
  }

  transaction(hash: Uint8Array): TxLocation | undefined {
    const p = this.txs.get(byteKey(hash));
    if (p === undefined || typeof p === 'object') return p;
    // The held block whose number has these low bits (the window is narrower than their span).
    const first = this.canonical[0]!;
    const at = (p >>> PLACE_INDEX_BITS) - Number(first.header.number & PLACE_BLOCK_MASK);
    const block = this.canonical[at < 0 ? at + PLACE_BLOCK_SPAN : at]!;
    return { block, index: p & PLACE_INDEX_MASK };
  }

  /**
   * Where transaction `index` of block `b` is, for the index: the block number's low bits and
   * the index in one small integer, or a location object where they do not fit (a window wider
   * than PLACE_BLOCK_SPAN blocks, a block of more than PLACE_INDEX_MASK + 1 transactions).
   */
  private place(b: ClientBlock, index: number): number | TxLocation {
    if (index > PLACE_INDEX_MASK || this.opts.window >= PLACE_BLOCK_SPAN) return { block: b, index };
    return (Number(b.header.number & PLACE_BLOCK_MASK) << PLACE_INDEX_BITS) | index;
  }

  /**
   * Resolves when the transaction is in a canonical block. A transaction may never land, so a
   * waiter goes with `signal` (rejecting with its reason): kept until then, a waiter for one that
   * never lands was kept for good.
   */
  included(hash: Uint8Array, signal?: AbortSignal): Promise<TxLocation> {
    const here = this.transaction(hash);
    if (here !== undefined) return Promise.resolve(here);
    signal?.throwIfAborted();
    const k = byteKey(hash);
    return new Promise((resolve, reject) => {
      const done = (l: TxLocation) => {
        signal?.removeEventListener('abort', abort);
        resolve(l);
      };
      const abort = () => {
        const list = this.waiters.get(k)?.filter((f) => f !== done) ?? [];
        if (list.length === 0) this.waiters.delete(k);
        else this.waiters.set(k, list);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', abort, { once: true });
      const list = this.waiters.get(k);
      if (list === undefined) this.waiters.set(k, [done]);
      else list.push(done);
    });
  }

  /** Transactions waited for (included) and not yet in a canonical block. */
  get waiting(): number {
    return this.waiters.size;
  }

  onHead(f: (b: ClientBlock) => void): () => void {
    this.headListeners.add(f);
    return () => this.headListeners.delete(f);
  }

  /**
   * Adds a canonical block: the new head, replacing any held at its height or above. Its
   * difficulty must meet the chain's rule and its parent must be the block held below it, so
   * the roots of a header are only trusted on a chain of valid headers (BAD_PROOF otherwise).
   */
  add(b: ClientBlock): void {
    const refuse = (why: string): never => {
      throw new ClientError(ClientErrorCode.BadProof, `block #${b.header.number} ${toHex(b.hash)}: ${why}`);
    };
    if (b.header.number > 0n && b.header.difficulty < this.opts.minDifficulty) {
      refuse(`difficulty ${b.header.difficulty} is below the chain's minimum ${this.opts.minDifficulty}`);
    }
    const first = this.canonical[0];
    if (first !== undefined) {
      const at = Number(b.header.number - first.header.number);
      if (at < 0) return; // older than anything held: of no use
      // Already held (a stream replaying what this view has): nothing changes.
      if (this.canonical[at] !== undefined && bytesEqual(this.canonical[at]!.hash, b.hash)) return;
      if (at > this.canonical.length) {
        throw new ClientError(
          ClientErrorCode.UnknownBlock,
          `block #${b.header.number} arrived after #${this.head!.header.number}: blocks missing in between`,
        );
      }
      const parent =
        this.canonical[at - 1] ??
        refuse('it replaces the oldest block held, whose parent this view no longer has');
      if (!bytesEqual(b.header.parentHash, parent.hash)) {
        refuse(
          `its parent is ${toHex(b.header.parentHash)}, the block held below it is ${toHex(parent.hash)}`,
        );
      }
      for (const gone of this.canonical.splice(at)) {
        this.byHash.delete(byteKey(gone.hash));
        for (const k of gone.txKeys) this.txs.delete(k);
      }
    }
    this.canonical.push(b);
    this.index(b);
    this.forgetOld();
    for (const f of this.headListeners) f(b);
  }

  /** `b` and its transactions by hash; waiters for them answered. */
  private index(b: ClientBlock): void {
    this.byHash.set(byteKey(b.hash), b);
    b.txKeys.forEach((k, index) => {
      this.txs.set(k, this.place(b, index));
      const w = this.waiters.get(k);
      if (w !== undefined) {
        const loc = { block: b, index };
        this.waiters.delete(k);
        for (const f of w) f(loc);
      }
    });
  }

  /**
   * Blocks below the oldest held, oldest first: a late client's history behind the block it
   * anchored on. They must be consecutive and linked, the newest the parent of the oldest held
   * (so each is as trusted as that block), each meeting the difficulty rule (BAD_PROOF otherwise,
   * nothing added); those the view already holds are skipped. The newest are kept while the
   * window and `maxTransactions` leave room, so history never pushes out newer blocks. Returns
   * how many were added.
   */
  addHistory(blocks: readonly ClientBlock[]): number {
    const first = this.canonical[0];
    if (first === undefined)
      throw new ClientError(ClientErrorCode.UnknownBlock, 'history before any block: nothing to link it to');
    const below = blocks.filter((b) => b.header.number < first.header.number);
    let child = first;
    for (let i = below.length - 1; i >= 0; i--) {
      const b = below[i]!;
      const refuse = (why: string): never => {
        throw new ClientError(
          ClientErrorCode.BadProof,
          `history block #${b.header.number} ${toHex(b.hash)}: ${why}`,
        );
      };
      if (b.header.number !== child.header.number - 1n)
        refuse(
          `expected #${child.header.number - 1n} below #${child.header.number}: blocks missing in between`,
        );
      if (!bytesEqual(child.header.parentHash, b.hash))
        refuse(`block #${child.header.number} names ${toHex(child.header.parentHash)} as its parent`);
      if (b.header.number > 0n && b.header.difficulty < this.opts.minDifficulty)
        refuse(`difficulty ${b.header.difficulty} is below the chain's minimum ${this.opts.minDifficulty}`);
      child = b;
    }
    let room = this.opts.window - this.canonical.length;
    let txRoom = this.opts.maxTransactions - this.txs.size;
    let start = below.length;
    while (start > 0 && room > 0 && txRoom >= below[start - 1]!.txKeys.length) {
      start--;
      room--;
      txRoom -= below[start]!.txKeys.length;
    }
    const kept = below.slice(start);
    if (kept[0]?.header.number === 0n) this.genesis = undefined;
    this.canonical.unshift(...kept);
    for (const b of kept) this.index(b);
    return kept.length;
  }

  /**
   * Drops the blocks below the window, and the oldest while more than `maxTransactions` are
   * held (keeping CHAIN_TX_CAP_FLOOR blocks), with their transactions; genesis is kept aside.
   */
  private forgetOld(): void {
    const kept = windowLength(this.newestTxCounts(), {
      most: this.opts.window,
      cap: this.opts.maxTransactions,
      floor: CHAIN_TX_CAP_FLOOR,
    });
    const over = Math.max(0, this.canonical.length - kept);
    if (over === 0) return;
    for (const gone of this.canonical.splice(0, over)) {
      if (gone.header.number === 0n) {
        this.genesis = gone;
        continue;
      }
      this.byHash.delete(byteKey(gone.hash));
      for (const k of gone.txKeys) this.txs.delete(k);
    }
  }

  /** Transactions of each canonical block held (what `maxTransactions` counts), the head first. */
  private *newestTxCounts(): Generator<number> {
    for (let i = this.canonical.length - 1; i >= 0; i--) yield this.canonical[i]!.txKeys.length;
  }
}

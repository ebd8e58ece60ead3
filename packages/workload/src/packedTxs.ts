/**
 * Generated transactions held packed, first in first out: what TrafficGenerator.signAhead keeps
 * until a driver sends it. As objects each with byte arrays of their own they took ~4 KB apiece in
 * the driver's heap (RSS 590 MB for 120,000); here their bytes share one buffer per 8,192 and the
 * rest sits in typed arrays, ~250 bytes apiece, and an object is made only when one is handed out.
 */
import type { GeneratedTx, TxKind } from './traffic.js';

const CHUNK = 8192;
const KINDS: readonly TxKind[] = ['transfer', 'erc20'];

class Chunk {
  data = new Uint8Array(CHUNK * 192);
  used = 0;
  /** Where transaction i's raw bytes start; its hash's 32 bytes end at starts[i + 1]. */
  readonly starts = new Uint32Array(CHUNK + 1);
  readonly from = new Int32Array(CHUNK);
  readonly to = new Int32Array(CHUNK);
  readonly nonce = new BigUint64Array(CHUNK);
  readonly kind = new Uint8Array(CHUNK);
  readonly value: bigint[] = [];
  readonly tokenAmount: bigint[] = [];
  /** Transactions put in, and handed out. */
  count = 0;
  read = 0;
}

export class PackedTxs {
  private chunks: Chunk[] = [];
  private first = 0;
  private held = 0;

  /** Transactions held. */
  get size(): number {
    return this.held;
  }

  push(tx: GeneratedTx): void {
    let c = this.chunks[this.chunks.length - 1];
    if (c === undefined || c.count === CHUNK) {
      c = new Chunk();
      this.chunks.push(c);
    }
    const need = tx.raw.length + 32;
    if (c.used + need > c.data.length) {
      // Views handed out earlier keep the old buffer, whose bytes do not change.
      const grown = new Uint8Array(Math.max(c.data.length * 2, c.used + need));
      grown.set(c.data.subarray(0, c.used));
      c.data = grown;
    }
    const i = c.count++;
    c.starts[i] = c.used;
    c.data.set(tx.raw, c.used);
    c.data.set(tx.hash, c.used + tx.raw.length);
    c.used += need;
    c.starts[i + 1] = c.used;
    c.from[i] = tx.from;
    c.to[i] = tx.to;
    c.nonce[i] = tx.nonce;
    c.kind[i] = tx.kind === 'erc20' ? 1 : 0;
    c.value.push(tx.value);
    c.tokenAmount.push(tx.tokenAmount);
    this.held++;
  }

  /** The oldest transaction held, now no longer held; undefined when none is. */
  shift(): GeneratedTx | undefined {
    if (this.held === 0) return undefined;
    const c = this.chunks[this.first]!;
    const i = c.read++;
    this.held--;
    if (c.read === CHUNK) {
      // Handed out whole: the chunk goes (the views handed out keep its bytes).
      this.chunks[this.first++] = undefined as unknown as Chunk;
      if (this.first === this.chunks.length) {
        this.chunks = [];
        this.first = 0;
      }
    }
    const end = c.starts[i + 1]!;
    return {
      raw: c.data.subarray(c.starts[i]!, end - 32),
      hash: c.data.subarray(end - 32, end),
      from: c.from[i]!,
      to: c.to[i]!,
      nonce: c.nonce[i]!,
      kind: KINDS[c.kind[i]!]!,
      value: c.value[i]!,
      tokenAmount: c.tokenAmount[i]!,
    };
  }
}

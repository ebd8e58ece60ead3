/**
 * The storage slots a contract call will read, guessed from what earlier pre-executions of
 * calls to the same contract with the same selector read, so they are fetched with the call's
 * first keys (its admission's storage round) instead of one fetch round each, with the whole
 * pre-execution run again after every round (an ERC-20 `transfer` read its two balances that
 * way: three runs and two more rounds, ~1.4 ms of a client's CPU where a plain transfer
 * took ~0.3).
 *
 * What is learned is how a slot derives from the call, not the slot itself: Solidity keeps
 * `mapping(address => …)` entry `k` of the mapping at slot `p` at `keccak256(pad32(k) ‖ pad32(p))`,
 * and `k` is usually the sender or an argument. A slot read is matched against those for the
 * sender and the first calldata words, `p` below {@link MAX_MAPPING_SLOT}; a small slot
 * number (a plain state variable) is kept as it is; any other slot is not predicted.
 *
 * A guess is only a prefetch: the pre-execution still reads through proofs and fetches what it
 * lacks, so a wrong guess costs one needless slot proof, never a wrong witness.
 */
import { byteKey, hashOne } from '@monsoon/dsm-tree';
import type { SignedTx } from '@monsoon/execution';
import type { Keccak } from '@monsoon/keccak';

/** Mapping slots `p` tried when learning: `0 ≤ p < MAX_MAPPING_SLOT`. */
export const MAX_MAPPING_SLOT = 16;
/** Calldata words tried as mapping keys (after the selector), besides the sender. */
export const KEY_WORDS = 4;
/** A slot read below this is a plain state variable, predicted as it is. */
const PLAIN_SLOT_LIMIT = 1n << 32n;

/** How one slot derives from a call. */
type SlotRule =
  /** keccak256(pad32(key) ‖ pad32(p)), key = the sender (word -1) or calldata word `word`. */
  | { readonly kind: 'mapping'; readonly word: number; readonly p: number }
  | { readonly kind: 'plain'; readonly slot: Uint8Array };

interface Learned {
  rules: readonly SlotRule[];
  /** Pre-executions that still lacked slots after this guess (re-learned each time, up to MAX_MISSES). */
  misses: number;
}

export interface SlotPredictorOptions {
  /** (contract, selector) pairs remembered at most; the oldest goes first. */
  maxEntries: number;
}

export const defaultSlotPredictorOptions: SlotPredictorOptions = { maxEntries: 4096 };

/** Guesses missed before a pair is left alone (its slots derive some other way). */
const MAX_MISSES = 3;

export class SlotPredictor {
  private readonly learned = new Map<string, Learned>();

  constructor(
    readonly opts: SlotPredictorOptions,
    private readonly keccak: Keccak,
  ) {}

  /** The slots of `tx.to` a call like it read before (empty: nothing learned, or not a call). */
  predict(tx: SignedTx, sender: Uint8Array): Uint8Array[] {
    const k = pairOf(tx);
    const l = k === undefined ? undefined : this.learned.get(k);
    if (l === undefined || l.rules.length === 0) return [];
    return l.rules.map((r) =>
      r.kind === 'plain' ? r.slot : hashOne(this.keccak, mappingInput(keyWord(tx, sender, r.word), r.p)),
    );
  }

  /**
   * Learns from a pre-execution of `tx` that read `slots` (latin1 keys) of `tx.to` and had to
   * fetch slots it lacked (`lacked`), after a guess (`guessed`) or none: the next call like it
   * is guessed from this one. Only a guess that was made and missed counts as a miss: the calls
   * already under way when a pair is first learned (thousands, under load) guessed nothing.
   */
  learn(tx: SignedTx, sender: Uint8Array, slots: Iterable<string>, lacked: boolean, guessed: boolean): void {
    const k = pairOf(tx);
    if (k === undefined || !lacked) return;
    const known = this.learned.get(k);
    if (known !== undefined) {
      if (known.misses >= MAX_MISSES) return;
      // Missed too often: guessed no more (its slots derive some other way).
      if (guessed && ++known.misses === MAX_MISSES) {
        known.rules = [];
        return;
      }
    }
    const read = [...slots].map((s) => pad32(Buffer.from(s, 'latin1')));
    if (read.length === 0) return;
    // Every candidate mapping slot of this call, hashed in one batch.
    const candidates: { word: number; p: number }[] = [];
    const words = Math.min(KEY_WORDS, Math.floor((tx.data.length - 4) / 32));
    for (let word = -1; word < words; word++)
      for (let p = 0; p < MAX_MAPPING_SLOT; p++) candidates.push({ word, p });
    const digests = this.keccak.keccak256Batch(
      candidates.map((c) => mappingInput(keyWord(tx, sender, c.word), c.p)),
    );
    const byDigest = new Map<string, { word: number; p: number }>();
    candidates.forEach((c, i) => {
      const d = byteKey(digests.subarray(32 * i, 32 * i + 32));
      if (!byDigest.has(d)) byDigest.set(d, c);
    });
    const rules: SlotRule[] = [];
    for (const slot of read) {
      const m = byDigest.get(byteKey(slot));
      if (m !== undefined) rules.push({ kind: 'mapping', word: m.word, p: m.p });
      else if (isPlain(slot)) rules.push({ kind: 'plain', slot });
    }
    this.learned.delete(k);
    if (this.learned.size >= this.opts.maxEntries) this.learned.delete(this.learned.keys().next().value!);
    this.learned.set(k, { rules, misses: known?.misses ?? 0 });
  }
}

/** The (contract, selector) a call is learned under; undefined for a transfer or a creation. */
function pairOf(tx: SignedTx): string | undefined {
  if (tx.to === undefined || tx.data.length < 4) return undefined;
  return byteKey(tx.to) + byteKey(tx.data.subarray(0, 4));
}

/** The sender (word -1) or calldata word `word` (zero-filled past the end), 32 bytes. */
function keyWord(tx: SignedTx, sender: Uint8Array, word: number): Uint8Array {
  if (word < 0) return pad32(sender);
  const out = new Uint8Array(32);
  out.set(tx.data.subarray(4 + 32 * word, 4 + 32 * word + 32));
  return out;
}

function mappingInput(key: Uint8Array, p: number): Uint8Array {
  const input = new Uint8Array(64);
  input.set(key);
  input[62] = p >> 8;
  input[63] = p & 0xff;
  return input;
}

function pad32(b: Uint8Array): Uint8Array {
  if (b.length === 32) return Uint8Array.from(b);
  const out = new Uint8Array(32);
  out.set(b.subarray(Math.max(0, b.length - 32)), 32 - Math.min(32, b.length));
  return out;
}

function isPlain(slot: Uint8Array): boolean {
  let v = 0n;
  for (const b of slot) v = (v << 8n) | BigInt(b);
  return v < PLAIN_SLOT_LIMIT;
}

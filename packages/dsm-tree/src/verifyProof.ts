/**
 * Proof verification. The proof is walked strictly in order: node i must hash to the reference
 * that node i-1 holds for the key's next step (node 0 to the root), and every node must be used.
 * Nodes are read in place (no trie nodes are built): a node that hashes to the reference its
 * parent holds is the genuine node, so only what the walk touches needs parsing — but every
 * read is bounds-checked and strict, so malformed bytes give BadProof, never a wrong answer.
 * Embedded nodes are read inside their parents; a proof that also lists them on their own (as
 * @ethereumjs/mpt's does) is accepted.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { bytesEqual, isBytesError, listItems, type RlpSpan, readWhole, toHex } from '@monsoon/util';
import { DsmError, DsmErrorCode, type DsmErrorMeta, isDsmError } from './dsmError.js';
import { EMPTY_ROOT } from './dsmTree.js';
import { keyNibble } from './nibbles.js';

function badProof(message: string, meta: DsmErrorMeta[DsmErrorCode.BadProof] = {}): never {
  throw new DsmError(DsmErrorCode.BadProof, message, meta);
}

/** Where the walk of one node ended. */
type Step =
  | { kind: 'value'; value: Uint8Array | undefined }
  | { kind: 'hash'; ref: Uint8Array }
  | { kind: 'embedded'; span: RlpSpan };

/**
 * Checks `proof` for `key` against `root`. Returns the value, or undefined for a valid proof of
 * absence. Throws DsmError(BadProof) for anything else: a node that does not hash-link, a
 * missing or extra node, malformed RLP, a malformed node.
 */
export function verifyProof(
  root: Uint8Array,
  key: Uint8Array,
  proof: readonly Uint8Array[],
  opts: { hash?: Keccak } = {},
): Uint8Array | undefined {
  if (root.length !== 32) badProof(`root must be 32 bytes, got ${root.length}`);
  if (proof.length === 0) {
    if (bytesEqual(root, EMPTY_ROOT)) return undefined;
    badProof('empty proof for a non-empty root', { root: toHex(root) });
  }
  const keccak = opts.hash ?? defaultKeccak;
  const digests = keccak.keccak256Batch(proof);
  const klen = key.length * 2;
  let expected = root;
  let d = 0;
  let idx = 0;
  for (;;) {
    if (idx >= proof.length) badProof(`proof ends before the key's path does; next node ${toHex(expected)}`);
    const got = digests.subarray(idx * 32, idx * 32 + 32);
    if (!bytesEqual(got, expected)) {
      badProof(`proof node ${idx} hashes to ${toHex(got)}, expected ${toHex(expected)}`, { index: idx });
    }
    const bytes = proof[idx]!;
    idx++;
    let span: RlpSpan;
    try {
      span = readWhole(bytes);
    } catch (e) {
      return badProof(`proof node ${idx - 1}: ${(e as Error).message}`, { index: idx - 1 });
    }
    for (;;) {
      let step: Step;
      try {
        ({ step, d } = walkNode(bytes, span, key, klen, d));
      } catch (e) {
        // A malformed node (BAD_NODE, or BAD_RLP from the reader) is a bad proof.
        if ((isDsmError(e) && e.code !== DsmErrorCode.BadProof) || isBytesError(e)) {
          badProof(`proof node ${idx - 1}: ${e.message}`, { index: idx - 1 });
        }
        throw e;
      }
      if (step.kind === 'value') {
        if (idx !== proof.length)
          badProof(`${proof.length - idx} proof node(s) after the end of the key's path`);
        return step.value;
      }
      if (step.kind === 'hash') {
        expected = step.ref;
        break;
      }
      // Embedded child: read in place; skip a redundant copy of it in the proof.
      const s = step.span;
      if (idx < proof.length && bytesEqual(proof[idx]!, bytes.subarray(s.start, s.end))) idx++;
      span = s;
    }
  }
}

/** One step down the key's path inside the node at `span`. */
function walkNode(
  b: Uint8Array,
  span: RlpSpan,
  key: Uint8Array,
  klen: number,
  d: number,
): { step: Step; d: number } {
  if (!span.list) badProof('a trie node must be an RLP list');
  const items = listItems(b, span);
  if (items.length === 17) {
    // Canonical-form checks: a hash only vouches for bytes, and a root may be anyone's hash.
    if (items[16]!.list) badProof('branch value must be a byte string');
    let entries = items[16]!.end > items[16]!.dataStart ? 1 : 0;
    if (entries && d & 1) badProof('branch value at an odd nibble depth (no byte key ends there)');
    for (let i = 0; i < 16; i++) if (items[i]!.list || items[i]!.end > items[i]!.dataStart) entries++;
    if (entries < 2) badProof('branch with fewer than two entries is not canonical');
    if (d === klen) {
      const v = items[16]!;
      if (v.list) badProof('branch value must be a byte string');
      return {
        step: { kind: 'value', value: v.end > v.dataStart ? b.slice(v.dataStart, v.end) : undefined },
        d,
      };
    }
    return { step: childStep(b, items[keyNibble(key, d)]!), d: d + 1 };
  }
  if (items.length !== 2) badProof(`a node has 2 or 17 items, found ${items.length}`);
  const hp = items[0]!;
  if (hp.list || hp.end === hp.dataStart) badProof('node path must be a non-empty byte string');
  const flag = b[hp.dataStart]! >> 4;
  if (flag > 3) badProof(`hex-prefix flag ${flag} is not 0–3`);
  const odd = flag & 1;
  if (!odd && (b[hp.dataStart]! & 0x0f) !== 0) badProof('even hex-prefix with a non-zero pad nibble');
  const plen = (hp.end - hp.dataStart - 1) * 2 + odd;
  let matches = klen - d >= plen;
  for (let i = 0; matches && i < plen; i++) {
    const p = i + (odd ? 1 : 2); // nibble position inside the hp bytes
    const byte = b[hp.dataStart + (p >> 1)]!;
    if ((p & 1 ? byte & 0x0f : byte >> 4) !== keyNibble(key, d + i)) matches = false;
  }
  const body = items[1]!;
  if (flag >= 2) {
    if (body.list || body.end === body.dataStart) badProof('leaf value must be a non-empty byte string');
    if ((d + plen) & 1) badProof('leaf key has an odd number of nibbles');
    const found = matches && d + plen === klen;
    return { step: { kind: 'value', value: found ? b.slice(body.dataStart, body.end) : undefined }, d };
  }
  if (plen === 0) badProof('extension with an empty path');
  if (!body.list && body.end === body.dataStart) badProof('extension without a child');
  if (body.list && listItems(b, body).length === 2)
    badProof('extension to a leaf or extension is not canonical');
  if (!matches) return { step: { kind: 'value', value: undefined }, d };
  return { step: childStep(b, body), d: d + plen };
}

function childStep(b: Uint8Array, item: RlpSpan): Step {
  if (item.list) {
    if (item.end - item.start >= 32) badProof('embedded child of 32 bytes or more');
    return { kind: 'embedded', span: item };
  }
  const len = item.end - item.dataStart;
  if (len === 0) return { kind: 'value', value: undefined };
  if (len !== 32) badProof(`child reference of ${len} bytes; expected a 32-byte hash or an embedded node`);
  return { kind: 'hash', ref: b.subarray(item.dataStart, item.end) };
}

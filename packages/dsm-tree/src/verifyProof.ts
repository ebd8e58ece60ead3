/**
 * Proof verification. The proof is walked strictly in order: node i must hash to the reference
 * that node i-1 holds for the key's next step (node 0 to the root), and every node must be used.
 * Embedded nodes are read inside their parents; a proof that also lists them on their own (as
 * @ethereumjs/mpt's does) is accepted.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { type Bin, binToHex, fromBin, toBin } from './bytes.js';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { keyEqualsBin, keyHasPath, keyNibble } from './nibbles.js';
import { decodeNode } from './nodeCodec.js';
import { BRANCH, EXTENSION, type InnerNode, LEAF, STUB, type TrieNode } from './trieNode.js';

const EMPTY_ROOT_HEX = '56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

function badProof(message: string, meta: Record<string, unknown> = {}): never {
  throw new DsmError(DsmErrorCode.BadProof, message, meta);
}

/**
 * Checks `proof` for `key` against `root`. Returns the value, or undefined for a valid proof of
 * absence. Throws DsmError(BadProof) for anything else: a node that does not hash-link, a
 * missing or extra node, malformed RLP, a non-canonical node.
 */
export function verifyProof(
  root: Uint8Array,
  key: Uint8Array,
  proof: readonly Uint8Array[],
  opts: { hash?: Keccak } = {},
): Uint8Array | undefined {
  if (root.length !== 32) badProof(`root must be 32 bytes, got ${root.length}`);
  const keccak = opts.hash ?? defaultKeccak;
  let expected: Bin = toBin(root);
  if (proof.length === 0) {
    if (binToHex(expected) === EMPTY_ROOT_HEX) return undefined;
    badProof('empty proof for a non-empty root', { root: binToHex(expected) });
  }
  const digests = Buffer.from(keccak.keccak256Batch(proof));
  const klen = key.length * 2;
  const prefix: number[] = [];
  let d = 0;
  let idx = 0;
  let result: Uint8Array | undefined;
  outer: for (;;) {
    if (idx >= proof.length)
      badProof(`proof ends before the key's path does; next node ${binToHex(expected)}`);
    const got = digests.toString('latin1', idx * 32, idx * 32 + 32);
    if (got !== expected) {
      badProof(`proof node ${idx} hashes to ${binToHex(got)}, expected ${binToHex(expected)}`, {
        index: idx,
      });
    }
    for (let i = 0; i < d; i++) prefix[i] = keyNibble(key, i); // decoding scribbles past d
    let node: TrieNode;
    try {
      node = decodeNode(proof[idx]!, prefix, d, expected);
    } catch (e) {
      if (e instanceof DsmError) badProof(`proof node ${idx}: ${e.message}`, { index: idx });
      throw e;
    }
    idx++;
    for (;;) {
      let next: TrieNode | undefined;
      const n = node as InnerNode;
      if (n.kind === LEAF) {
        result = keyEqualsBin(key, n.key) ? fromBin(n.value) : undefined;
        break outer;
      }
      if (n.kind === BRANCH) {
        if (d === klen) {
          result = n.value === undefined ? undefined : fromBin(n.value);
          break outer;
        }
        next = n.children[keyNibble(key, d)];
        d++;
      } else if (n.kind === EXTENSION) {
        if (!keyHasPath(key, d, n.path)) {
          result = undefined;
          break outer;
        }
        d += n.path.length;
        next = n.child;
      }
      if (next === undefined) {
        result = undefined;
        break outer;
      }
      if (next.kind === STUB) {
        expected = next.ref;
        continue outer;
      }
      // Embedded: already decoded inside its parent. Skip a redundant copy of it in the proof.
      if (idx < proof.length && toBin(proof[idx]!) === next.ref) idx++;
      node = next;
    }
  }
  if (idx !== proof.length) badProof(`${proof.length - idx} proof node(s) after the end of the key's path`);
  return result;
}

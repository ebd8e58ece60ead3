/**
 * A DSM-Tree as bytes and back, round-trip exact (stubs included) — what checkpoints store.
 *
 * Format: a header — "DSMT", version 2, the 32-byte root hash, and the first 4 bytes of
 * keccak256 of those 37 bytes — then the nodes in pre-order. A record is
 *   0x00                      empty tree (root only)
 *   0x01 varint(len) rlp      a node; the records of its hashed children follow, in child order
 *   0x02                      a stub (its hash is in its parent, or in the header for the root)
 * Embedded children live inside their parent's RLP. The root node is checked against the
 * header's root hash and every other node against the hash its parent holds, so a corrupt
 * encoding is refused rather than loaded.
 */
import type { Keccak } from '@monsoon/keccak';
import { type Bin, binToHex, toBin } from './bytes.js';
import { DsmError, DsmErrorCode } from './dsmError.js';
import { DsmTree, type DsmTreeOptions, defaultDsmTreeOptions, EMPTY_ROOT } from './dsmTree.js';
import { HashNode } from './hashNode.js';
import { ByteWriter, branchSpans, decodeNode, extensionChildRef, slotHash, writeLeaf } from './nodeCodec.js';
import { BRANCH, EXTENSION, type InnerNode, LEAF, STUB, type TrieNode } from './trieNode.js';

const MAGIC = [0x44, 0x53, 0x4d, 0x54]; // "DSMT"
const VERSION = 2;
const HEADER = 41;
const EMPTY = 0;
const NODE = 1;
const STUB_TAG = 2;

function writeVarint(w: ByteWriter, n: number): void {
  w.ensure(10);
  while (n >= 0x80) {
    w.buf[w.pos++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  w.buf[w.pos++] = n;
}

/** Encodes the whole tree (hashing what is dirty first). */
export function encodeTree(tree: DsmTree): Uint8Array {
  const chunks = [...encodeTreeChunks(tree)];
  return chunks.length === 1 ? chunks[0]! : new Uint8Array(Buffer.concat(chunks));
}

/**
 * The same bytes as encodeTree, in chunks of about `chunkBytes`: a caller that yields to the
 * event loop between chunks (a checkpoint writer) never blocks it for a whole big tree. The
 * tree must not change until the last chunk is taken (a snapshot does not).
 */
export function* encodeTreeChunks(tree: DsmTree, chunkBytes = 1 << 20): Generator<Uint8Array> {
  const rootHash = tree.rootBin();
  const w = new ByteWriter(chunkBytes + (1 << 16));
  w.ensure(HEADER + 1);
  for (const b of MAGIC) w.buf[w.pos++] = b;
  w.buf[w.pos++] = VERSION;
  w.pos += w.buf.write(rootHash, w.pos, 'latin1');
  w.buf.set(tree.keccak.keccak256(w.buf.subarray(0, 37)).subarray(0, 4), 37);
  w.pos = HEADER;
  const root = tree.rootNodeForInternalUse;
  if (root === undefined) w.buf[w.pos++] = EMPTY;
  else {
    // Pre-order with an explicit stack: a node's record, then its hashed children in order.
    const scratch = new ByteWriter(1024);
    const nodes: TrieNode[] = [root];
    const depths: number[] = [0];
    while (nodes.length > 0) {
      const node = nodes.pop()!;
      const depth = depths.pop()!;
      writeRecord(w, node, depth, scratch);
      if (node.kind === BRANCH) {
        // The hashed children are the slots the encoding references by hash (0xa0 + 32 bytes).
        const enc = node.enc!;
        branchSpans(enc, spans);
        for (let i = 15; i >= 0; i--) {
          if (slotHash(enc, spans, i) !== undefined) {
            nodes.push(node.child(i)!);
            depths.push(depth + 1);
          }
        }
      } else if (node.kind === EXTENSION && extensionChildRef(node.enc!).length === 32) {
        nodes.push(node.child);
        depths.push(depth + node.path.length);
      }
      if (w.pos >= chunkBytes) {
        yield new Uint8Array(w.buf.subarray(0, w.pos));
        w.pos = 0;
      }
    }
  }
  if (w.pos > 0) yield new Uint8Array(w.buf.subarray(0, w.pos));
}

/** One record: a stub's tag, or a node's tag, length and RLP. */
function writeRecord(w: ByteWriter, node: TrieNode, depth: number, scratch: ByteWriter): void {
  if (node.kind === STUB) {
    w.ensure(1);
    w.buf[w.pos++] = STUB_TAG;
    return;
  }
  scratch.pos = 0;
  if (node.kind === LEAF) writeLeaf(scratch, node, depth);
  else scratch.bin(node.enc!);
  const len = scratch.pos;
  w.ensure(len + 11);
  w.buf[w.pos++] = NODE;
  writeVarint(w, len);
  w.ensure(len);
  scratch.buf.copy(w.buf, w.pos, 0, len);
  w.pos += len;
}

const spans = new Int32Array(18);

function corrupt(message: string): never {
  throw new DsmError(DsmErrorCode.BadEncoding, message);
}

class Reader {
  pos = 0;
  constructor(readonly b: Uint8Array) {}
  byte(): number {
    if (this.pos >= this.b.length) corrupt(`truncated at byte ${this.pos}`);
    return this.b[this.pos++]!;
  }
  varint(): number {
    let n = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const x = this.byte();
      n += (x & 0x7f) * mul;
      if (x < 0x80) return n;
      mul *= 128;
    }
    return corrupt(`varint too long at byte ${this.pos}`);
  }
  bytes(n: number): Uint8Array {
    if (this.pos + n > this.b.length) corrupt(`truncated: need ${n} bytes at ${this.pos}`);
    const s = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

/** Decodes what encodeTree wrote; throws DsmError(BadEncoding) on any corruption. */
export function decodeTree(bytes: Uint8Array, opts: DsmTreeOptions = {}): DsmTree {
  const keccak = opts.hash ?? defaultDsmTreeOptions.hash;
  const r = new Reader(bytes);
  const head = r.bytes(HEADER);
  for (let i = 0; i < 4; i++) if (head[i] !== MAGIC[i]) corrupt('not a DSM-Tree encoding (bad magic)');
  if (head[4] !== VERSION) corrupt(`unknown encoding version ${head[4]}`);
  const check = keccak.keccak256(head.subarray(0, 37));
  for (let i = 0; i < 4; i++) if (check[i] !== head[37 + i]) corrupt('header checksum mismatch');
  const rootHash = toBin(head.subarray(5, 37));
  const tag = r.byte();
  let root: TrieNode | undefined;
  if (tag === EMPTY) {
    if (rootHash !== toBin(EMPTY_ROOT)) corrupt('empty-tree record under a non-empty root hash');
    root = undefined;
  } else if (tag === STUB_TAG) root = new HashNode(rootHash);
  else if (tag === NODE) root = readNode(r, rootHash, [], 0, keccak);
  else corrupt(`unknown record tag ${tag}`);
  if (r.pos !== bytes.length) corrupt(`${bytes.length - r.pos} trailing bytes`);
  return DsmTree.fromNode(root, opts);
}

function readNode(
  r: Reader,
  expected: Bin | undefined,
  prefix: number[],
  d: number,
  keccak: Keccak,
): InnerNode {
  const enc = r.bytes(r.varint());
  const h = toBin(keccak.keccak256(enc));
  if (expected !== undefined && h !== expected) {
    corrupt(`node hashes to ${binToHex(h)}, its parent expects ${binToHex(expected)}`);
  }
  let node: InnerNode;
  try {
    node = decodeNode(enc, prefix, d);
  } catch (e) {
    return corrupt(`bad node at byte ${r.pos}: ${(e as Error).message}`);
  }
  if (node.kind === BRANCH) {
    for (let i = 0; i < 16; i++) {
      const c = node.child(i);
      if (c !== undefined && c.kind === STUB) {
        prefix[d] = i;
        node.setChild(i, readChild(r, c, prefix, d + 1, keccak));
      }
    }
  } else if (node.kind === EXTENSION && node.child.kind === STUB) {
    for (let i = 0; i < node.path.length; i++) prefix[d + i] = node.path.charCodeAt(i);
    node.child = readChild(r, node.child, prefix, d + node.path.length, keccak);
  } else if (node.kind !== LEAF && node.kind !== EXTENSION) {
    corrupt('unexpected node kind');
  }
  return node;
}

function readChild(r: Reader, stub: HashNode, prefix: number[], d: number, keccak: Keccak): TrieNode {
  const tag = r.byte();
  if (tag === STUB_TAG) return stub;
  if (tag !== NODE) corrupt(`unknown record tag ${tag} at byte ${r.pos - 1}`);
  return readNode(r, stub.ref, prefix, d, keccak);
}

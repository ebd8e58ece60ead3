/**
 * A node bag: trie nodes keyed by their hash, each once — the union of many proofs. Clients
 * ship one bag per submission instead of one proof per key; a miner fills its top layer from it.
 * A node enters a bag only under the hash it really has (the bag computes it), so a lookup by a
 * stub's hash can only ever return the node that stub stands for — which is why a tree uses a
 * bag's nodes without hashing them again. Nodes are kept as given, not copied: they must not be
 * changed once added.
 */
import { keccak as defaultKeccak, type Keccak } from '@monsoon/keccak';
import { type Bin, toBin } from './bytes.js';

export class NodeBag {
  private readonly nodes = new Map<Bin, Uint8Array>();
  private bytes = 0;
  private readonly keccak: Keccak;

  constructor(opts: { hash?: Keccak } = {}) {
    this.keccak = opts.hash ?? defaultKeccak;
  }

  /** A bag holding the nodes of the given proofs. */
  static fromProofs(proofs: readonly (readonly Uint8Array[])[], opts: { hash?: Keccak } = {}): NodeBag {
    const bag = new NodeBag(opts);
    for (const p of proofs) bag.addNodes(p);
    return bag;
  }

  /**
   * Adds RLP-encoded nodes (a proof, or any list), hashing them in one batch; returns their
   * hashes, nodes[i]'s at [32i, 32i + 32) (what `deleteHashes` takes to take them out again).
   */
  addNodes(nodes: readonly Uint8Array[]): Uint8Array {
    if (nodes.length === 0) return new Uint8Array(0);
    const digests = this.keccak.keccak256Batch(nodes);
    const d = Buffer.from(digests.buffer, digests.byteOffset, digests.length);
    for (let i = 0; i < nodes.length; i++) this.put(d.toString('latin1', i * 32, i * 32 + 32), nodes[i]!);
    return digests;
  }

  /** Removes the nodes with the hashes `hashes` holds, 32 bytes each, where the bag has them. */
  deleteHashes(hashes: Uint8Array): void {
    const d = Buffer.from(hashes.buffer, hashes.byteOffset, hashes.length);
    for (let i = 0; i + 32 <= hashes.length; i += 32) {
      const h = d.toString('latin1', i, i + 32);
      const n = this.nodes.get(h);
      if (n === undefined) continue;
      this.nodes.delete(h);
      this.bytes -= n.length;
    }
  }

  /**
   * Adds nodes whose hashes the caller has computed and checked already: `hashes` holds nodes[i]'s
   * keccak-256 at [32i, 32i + 32). For a source that kept each node only after hashing it to the
   * hash it was fetched by (a one-sided walk): hashing them again would be the same work twice.
   * A wrong hash here breaks the bag's promise, so nothing else may call this.
   */
  addVerified(nodes: readonly Uint8Array[], hashes: Uint8Array): void {
    const d = Buffer.from(hashes.buffer, hashes.byteOffset, hashes.length);
    for (let i = 0; i < nodes.length; i++) this.put(d.toString('latin1', i * 32, i * 32 + 32), nodes[i]!);
  }

  /** Adds one node; returns its hash. */
  add(node: Uint8Array): Uint8Array {
    const h = this.keccak.keccak256(node);
    this.put(toBin(h), node);
    return h;
  }

  /**
   * Adds the node `other` holds under `hash` (a binary string), if it holds one, and returns it:
   * no hashing, since `other` computed that hash itself.
   */
  takeFrom(other: NodeBag, hash: Bin): Uint8Array | undefined {
    const n = other.nodes.get(hash);
    if (n !== undefined) this.put(hash, n);
    return n;
  }

  /** The nodes whose hashes (32-byte binary strings, as `getBin` takes) `keep` accepts, in a new bag: no hashing. */
  filter(keep: (hash: Bin) => boolean): NodeBag {
    const out = new NodeBag({ hash: this.keccak });
    for (const [h, n] of this.nodes) if (keep(h)) out.put(h, n);
    return out;
  }

  /**
   * Adds the nodes of another bag whose hashes `keep` accepts (merge of a filter, with no bag
   * in between); returns the bytes of the nodes accepted, whether this bag had them or not.
   */
  mergeWhere(other: NodeBag, keep: (hash: Bin) => boolean): number {
    let bytes = 0;
    for (const [h, n] of other.nodes) {
      if (!keep(h)) continue;
      bytes += n.length;
      this.put(h, n);
    }
    return bytes;
  }

  /**
   * Adds a node under the hash another bag holds it by (a binary string): for nodes taken out of
   * a bag earlier and kept with their hashes (a path a walk read, see walkPath). No hashing; a
   * node given under a hash it does not have breaks the bag's promise.
   */
  addHeld(hash: Bin, node: Uint8Array): void {
    this.put(hash, node);
  }

  /** Adds every node of another bag. */
  merge(other: NodeBag): void {
    for (const [h, n] of other.nodes) this.put(h, n);
  }

  private put(hash: Bin, node: Uint8Array): void {
    // One lookup, not has-then-set: a node already held is replaced by the same bytes (the hash
    // names them), so only the count of bytes must see whether it was new.
    const n = this.nodes.size;
    this.nodes.set(hash, node);
    if (this.nodes.size !== n) this.bytes += node.length;
  }

  /** The node with this 32-byte hash, if the bag has it. */
  get(hash: Uint8Array): Uint8Array | undefined {
    return this.nodes.get(toBin(hash));
  }

  has(hash: Uint8Array): boolean {
    return this.nodes.has(toBin(hash));
  }

  /** Lookup by binary-string hash (the tree's internal form). */
  getBin(hash: Bin): Uint8Array | undefined {
    return this.nodes.get(hash);
  }

  /** Number of distinct nodes. */
  get size(): number {
    return this.nodes.size;
  }

  /** Total bytes of the node encodings (what a bag costs on the wire, hashes aside). */
  get byteSize(): number {
    return this.bytes;
  }

  /** The node encodings, each once. */
  values(): Uint8Array[] {
    return [...this.nodes.values()];
  }

  /** [hash, node] pairs. */
  *entries(): IterableIterator<[Uint8Array, Uint8Array]> {
    for (const [h, n] of this.nodes) yield [new Uint8Array(Buffer.from(h, 'latin1')), n];
  }
}

/**
 * An independent reading of an Ethereum proof (decoded with @ethereumjs/rlp, not the tree's own
 * codec): where each proof node sits on the key's path. Level counts every node from the root
 * (level 0), embedded ones included, as prune(r) and prove(key, c) count; depth is the nibble
 * depth at which the node hangs.
 */
import { RLP } from '@ethereumjs/rlp';
import { refKeccak } from './reference.js';

type Raw = Uint8Array | Raw[];

export interface PathNode {
  level: number;
  depth: number;
  /** The node's RLP, as in the proof. */
  node: Uint8Array;
  kind: 'branch' | 'extension' | 'leaf';
}

export function nibbles(key: Uint8Array): number[] {
  const out: number[] = [];
  for (const b of key) out.push(b >> 4, b & 15);
  return out;
}

function kindOf(n: Raw[]): PathNode['kind'] {
  if (n.length === 17) return 'branch';
  const hp = n[0] as Uint8Array;
  return hp[0]! >> 4 >= 2 ? 'leaf' : 'extension';
}

/**
 * The position of every node of `proof` (a proof from DsmTree.prove, which lists only the root
 * and hashed nodes) on `key`'s path. Throws if the proof does not chain by hash.
 */
export function proofPath(proof: readonly Uint8Array[], key: Uint8Array): PathNode[] {
  const out: PathNode[] = [];
  if (proof.length === 0) return out;
  const nib = nibbles(key);
  let idx = 0;
  let node = RLP.decode(proof[0]!) as Raw[];
  let level = 0;
  let depth = 0;
  out.push({ level, depth, node: proof[0]!, kind: kindOf(node) });
  for (;;) {
    let child: Raw;
    if (node.length === 17) {
      if (depth === nib.length) break;
      child = node[nib[depth]!]!;
      depth++;
    } else {
      const hp = node[0] as Uint8Array;
      const flag = hp[0]! >> 4;
      const path = nibbles(hp).slice(flag & 1 ? 1 : 2);
      if (flag >= 2) break;
      if (!path.every((x, i) => nib[depth + i] === x)) break;
      depth += path.length;
      child = node[1]!;
    }
    level++;
    if (child instanceof Uint8Array) {
      if (child.length === 0) break;
      idx++;
      const next = proof[idx];
      if (next === undefined) throw new Error(`proof ends at level ${level}, a hashed node is missing`);
      if (Buffer.compare(refKeccak(next), child) !== 0) throw new Error(`proof node ${idx} does not chain`);
      node = RLP.decode(next) as Raw[];
      out.push({ level, depth, node: next, kind: kindOf(node) });
    } else {
      node = child;
    }
  }
  if (idx !== proof.length - 1)
    throw new Error(`proof has ${proof.length - idx - 1} nodes past the path's end`);
  return out;
}

/** The last node the path visits, embedded ones included, with its kind (for absence proofs). */
export function lastKind(proof: readonly Uint8Array[], key: Uint8Array): PathNode['kind'] | undefined {
  const nib = nibbles(key);
  if (proof.length === 0) return undefined;
  let node = RLP.decode(proof[0]!) as Raw[];
  let idx = 0;
  let depth = 0;
  for (;;) {
    let child: Raw;
    if (node.length === 17) {
      if (depth === nib.length) return 'branch';
      child = node[nib[depth]!]!;
      depth++;
    } else {
      const hp = node[0] as Uint8Array;
      const flag = hp[0]! >> 4;
      if (flag >= 2) return 'leaf';
      const path = nibbles(hp).slice(flag & 1 ? 1 : 2);
      if (!path.every((x, i) => nib[depth + i] === x)) return 'extension';
      depth += path.length;
      child = node[1]!;
    }
    if (child instanceof Uint8Array) {
      if (child.length === 0) return kindOf(node);
      node = RLP.decode(proof[++idx]!) as Raw[];
    } else {
      node = child;
    }
  }
}

/** The first node on the path at level ≥ r that a prune(r) turns into a stub (hashed, ≥ 32 bytes). */
export function stubAt(proof: readonly Uint8Array[], key: Uint8Array, r: number): PathNode | undefined {
  return proofPath(proof, key).find((p) => p.level >= r && p.node.length >= 32);
}

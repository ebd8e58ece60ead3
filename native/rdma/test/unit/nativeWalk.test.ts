/**
 * The addon's walk (src/regionWalk.cc) against the JS reference (src/proofWalk.ts) and the trie
 * library: random tries whose keys share long prefixes (deep leaves, extensions, nodes embedded
 * in their parents), with deletes, several versions of one tree in one region. Every key present
 * and absent walks to the same value and Ethereum proof, byte for byte, through both; a node the
 * region lacks makes both miss; a forged region makes the native walk miss (and count it), never
 * answer differently; a verified node that is not RLP, bad arguments and a closed mapping are
 * typed errors, not crashes.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmTree } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import {
  loadNative,
  MappedWalkSource,
  RdmaErrorCode,
  ReaderWalkSource,
  RegionReader,
  RegionWriter,
  type TrieWalk,
  walkAccountsFrom,
  walkTrie,
} from '@monsoon/rdma';
import { Prng } from '@monsoon/test-utils';

const hex = (b: Uint8Array | undefined) => (b === undefined ? '-' : Buffer.from(b).toString('hex'));
const bin = (b: Uint8Array) => Buffer.from(b).toString('latin1');
const show = (w: TrieWalk | undefined) =>
  w === undefined ? 'miss' : `${hex(w.value)}|${w.proof.map(hex).join(',')}`;

function near(base: Uint8Array, shared: number, rng: Prng): Uint8Array {
  const k = rng.bytes(32);
  k.set(base.subarray(0, shared));
  return k;
}

/** A tree through a few versions (puts and deletes), every version's nodes in one region. */
function versions(seed: number) {
  const rng = new Prng(seed);
  const tree = new DsmTree();
  const w = RegionWriter.inMemory(40_000, 8 << 20);
  const bases = Array.from({ length: 4 }, () => rng.bytes(32));
  const keys: Uint8Array[] = [];
  const roots: { root: Uint8Array; snapshot: DsmTree }[] = [];
  for (let v = 0; v < 4; v++) {
    for (let i = 0; i < 150; i++) {
      const k = rng.int(3) === 0 ? rng.bytes(32) : near(bases[rng.int(4)]!, 20 + rng.int(12), rng);
      keys.push(k);
      tree.put(k, rng.bytes(1 + rng.int(v % 2 === 0 ? 3 : 60)));
    }
    for (let i = 0; i < 30; i++) tree.del(keys[rng.int(keys.length)]!);
    const root = tree.root();
    tree.forEachNode((h, enc) => w.put(h, enc));
    w.advance();
    roots.push({ root, snapshot: tree.snapshot() });
  }
  const absent = Array.from({ length: 60 }, () => near(bases[rng.int(4)]!, 16 + rng.int(14), rng));
  return { w, keys: [...keys, ...absent], roots, rng };
}

/** A copy of `w`'s region with `arenaFlips` bytes flipped in its node arena and 40 in its index. */
function forge(w: RegionWriter, arena: number, rng: Prng, arenaFlips: number): Uint8Array {
  const copy = w.bytes.slice();
  for (let k = 0; k < arenaFlips; k++) copy[arena + rng.int(w.arenaUsed)]! ^= 1 + rng.int(255);
  for (let k = 0; k < 40; k++) copy[4096 + rng.int(arena - 4096)]! ^= 1 + rng.int(255);
  return copy;
}

describe('the native walk', () => {
  it('is built with the addon', () => {
    expect(MappedWalkSource.available()).toBe(true);
  });

  it('answers as the JS walk and DsmTree, every key of every version, in one batch', () => {
    for (const seed of [1, 2, 3]) {
      const { w, keys, roots } = versions(seed);
      const reader = new RegionReader(w.bytes);
      const native = new MappedWalkSource(w.bytes, reader.geometry);
      const walks = roots.flatMap(({ root }) => keys.map((key) => ({ root, key })));
      const got = native.step({ walks, fetch: [] });
      let i = 0;
      for (const { root, snapshot } of roots) {
        for (const key of keys) {
          const js = walkTrie((h) => reader.node(h), root, key);
          expect(js).toBeDefined();
          expect(show(got.walks[i])).toBe(show(js));
          expect(hex(got.walks[i]!.value)).toBe(hex(snapshot.get(key)));
          i++;
        }
      }
      // Each distinct node read once, and each verified.
      expect(new Set(got.nodes.map(bin)).size).toBe(got.nodes.length);
      // Each with the hash it was checked against, in order.
      got.nodes.forEach((n, j) => {
        expect(hex(got.hashes!.subarray(32 * j, 32 * j + 32))).toBe(hex(keccak.keccak256(n)));
      });
      expect(got.hashes!.length).toBe(32 * got.nodes.length);
      expect(native.counters.misses).toBe(0);
      expect(native.counters.rejected).toBe(0);
      expect(native.rounds).toBeGreaterThan(2);
    }
  });

  it('an empty trie walks to absence without reading; a hash fetched by hash is verified', () => {
    const { w, roots } = versions(4);
    const reader = new RegionReader(w.bytes);
    const native = new MappedWalkSource(w.bytes, reader.geometry);
    const empty = new DsmTree().root();
    const top = reader.node(roots[0]!.root)!;
    const got = native.step({
      walks: [{ root: empty, key: new Uint8Array(32) }],
      fetch: [roots[0]!.root, new Uint8Array(32).fill(7), roots[0]!.root],
    });
    expect(show(got.walks[0])).toBe('-|');
    expect(hex(got.fetched[0])).toBe(hex(top));
    expect(got.fetched[1]).toBeUndefined();
    expect(got.fetched[2]).toBe(got.fetched[0]);
    expect(hex(native.node(roots[0]!.root))).toBe(hex(top));
    expect(native.node(new Uint8Array(32))).toBeUndefined();
  });

  it('a node by hash (readNode) is the JS reader’s, every node of every version; forged bytes never pass', () => {
    const { w, roots, rng } = versions(8);
    const reader = new RegionReader(w.bytes);
    const native = new MappedWalkSource(w.bytes, reader.geometry);
    const hashes: Uint8Array[] = [];
    for (const { snapshot } of roots)
      snapshot.forEachNode((h) => {
        hashes.push(Uint8Array.from(Buffer.from(h, 'latin1')));
      });
    expect(hashes.length).toBeGreaterThan(500);
    for (const h of hashes) {
      const n = native.node(h);
      expect(n).toBeDefined();
      expect(hex(n)).toBe(hex(reader.node(h)));
    }
    // A node longer than the reader's 4 KiB landing buffer is read whole (the buffer grows).
    const blob = rng.bytes(10_000);
    const blobHash = keccak.keccak256(blob);
    w.put(bin(blobHash), blob);
    expect(hex(new MappedWalkSource(w.bytes, reader.geometry).node(blobHash))).toBe(hex(blob));
    // Flipped bytes in the arena and the index: a read answers the node or nothing.
    let missed = 0;
    for (let round = 0; round < 10; round++) {
      const forged = new MappedWalkSource(forge(w, reader.geometry.arenaOffset, rng, 200), reader.geometry);
      for (const h of hashes) {
        const n = forged.node(h);
        if (n === undefined) missed++;
        else expect(hex(n)).toBe(hex(reader.node(h)));
      }
    }
    expect(missed).toBeGreaterThan(0);
  });

  it('misses where the region lacks a node on the path, as the JS walk does', () => {
    const { w, keys, roots } = versions(5);
    const { root, snapshot } = roots.at(-1)!;
    const present = keys.filter((k) => snapshot.get(k) !== undefined);
    const leaf = snapshot.prove(present[3]!).at(-1)!;
    w.remove(bin(keccak.keccak256(leaf)));
    const reader = new RegionReader(w.bytes);
    const native = new MappedWalkSource(w.bytes, reader.geometry);
    const got = native.step({ walks: present.map((key) => ({ root, key })), fetch: [] });
    present.forEach((key, i) => {
      expect(show(got.walks[i])).toBe(show(walkTrie((h) => reader.node(h), root, key)));
    });
    expect(got.walks[3]).toBeUndefined();
    expect(got.walks.filter((x) => x === undefined).length).toBeGreaterThan(0);
    expect(native.counters.misses).toBe(1);
  });

  it('a forged region: flipped bytes make walks miss or tell the truth, never lie', () => {
    const { w, keys, roots, rng } = versions(6);
    const { root } = roots.at(-1)!;
    const truth = new RegionReader(w.bytes);
    const expected = keys.map((key) => show(walkTrie((h) => truth.node(h), root, key)));
    let missed = 0;
    let rejected = 0;
    for (let round = 0; round < 30; round++) {
      const native = new MappedWalkSource(forge(w, truth.geometry.arenaOffset, rng, 100), truth.geometry);
      const got = native.step({ walks: keys.map((key) => ({ root, key })), fetch: [] });
      got.walks.forEach((g, i) => {
        if (g === undefined) missed++;
        else expect(show(g)).toBe(expected[i]);
      });
      rejected += native.counters.rejected;
    }
    expect(missed).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(0);
  });

  it('accounts through the native source answer as through the JS one (walkAccountsFrom)', async () => {
    const { w, roots } = versions(7);
    const reader = new RegionReader(w.bytes);
    // The tries above are not account tries: a walk that finds a value that is not an account is
    // malformed to both, so ask only for absent accounts here (accounts proper: regionExport tests).
    const rng = new Prng(70);
    const queries = Array.from({ length: 50 }, () => ({ address: rng.bytes(20), slots: [], code: true }));
    for (const { root } of roots) {
      const a = await walkAccountsFrom(new MappedWalkSource(w.bytes, reader.geometry), root, queries);
      const b = await walkAccountsFrom(new ReaderWalkSource(reader), root, queries);
      expect(a.answers.map((x) => hex(x?.accountRlp) + x?.accountProof.map(hex).join())).toEqual(
        b.answers.map((x) => hex(x?.accountRlp) + x?.accountProof.map(hex).join()),
      );
    }
  });

  it('a verified node that is not RLP is BAD_REGION; bad arguments and a closed region are typed', () => {
    const w = RegionWriter.inMemory(100, 1 << 16);
    const junk = new TextEncoder().encode('this is not an RLP list but it is stored under its hash');
    const h = keccak.keccak256(junk);
    w.put(bin(h), junk);
    const reader = new RegionReader(w.bytes);
    const native = new MappedWalkSource(w.bytes, reader.geometry);
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as { code?: string }).code;
      }
      return 'no error';
    };
    expect(code(() => native.step({ walks: [{ root: h, key: new Uint8Array(32) }], fetch: [] }))).toBe(
      RdmaErrorCode.BadRegion,
    );
    const b = loadNative().binding!;
    const g = Float64Array.of(
      reader.geometry.bucketCount,
      reader.geometry.indexOffset,
      reader.geometry.arenaOffset,
      reader.geometry.totalBytes,
    );
    const none = new Uint8Array(0);
    const walk = (...a: unknown[]) => (b.walkRegion as (...x: unknown[]) => unknown)(...a);
    expect(code(() => walk(w.bytes, g, h, new Uint8Array(31), new Uint32Array(1), none, 3))).toBe(
      RdmaErrorCode.BadArgument,
    );
    expect(code(() => walk(w.bytes, g, h, new Uint8Array(32), new Uint32Array([1]), none, 3))).toBe(
      RdmaErrorCode.BadArgument,
    );
    expect(code(() => walk(w.bytes, g, h, none, new Uint32Array(0), none, 0))).toBe(
      RdmaErrorCode.BadArgument,
    );
    expect(
      code(() => walk(w.bytes, Float64Array.of(3, 4096, 4096, 8192), h, none, new Uint32Array(0), none, 1)),
    ).toBe(RdmaErrorCode.BadArgument);
    expect(code(() => walk('x', g))).toBe(RdmaErrorCode.BadArgument);
    // A region shorter than its geometry (a mapping smaller than the header says).
    expect(code(() => walk(w.bytes.subarray(0, 8192), g, h, none, new Uint32Array(0), none, 1))).toBe(
      RdmaErrorCode.RegionTooSmall,
    );
    // A closed mapping's bytes are detached: empty, so the walk refuses instead of reading freed memory.
    const detached = new Uint8Array(new ArrayBuffer(64));
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    expect(code(() => walk(detached, g, h, none, new Uint32Array(0), none, 1))).toBe(RdmaErrorCode.Closed);
    // The RDMA walk: a queue pair that is not open (or no verbs in this build) is refused at once.
    const remote = (b.walkRemote as (...x: unknown[]) => unknown).bind(b);
    expect([RdmaErrorCode.BadHandle, RdmaErrorCode.NoVerbs]).toContain(
      code(() => remote(987654, 1, 0n, 0, g, h, none, new Uint32Array(0), none, 1)),
    );
    expect([RdmaErrorCode.BadHandle, RdmaErrorCode.NoVerbs]).toContain(code(() => remote('x')));
  });
});

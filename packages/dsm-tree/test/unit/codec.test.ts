/**
 * encodeTree/decodeTree: exact round trips (stubs included), and corrupt input refused; the fault
 * path's leaf decoder held to the general one.
 */
import { describe, expect, it } from '@jest/globals';
import { DsmError, DsmErrorCode, DsmTree, decodeTree, encodeTree, hashedChildren } from '@monsoon/dsm-tree';
import { Prng } from '@monsoon/test-utils';
import { keyNibble } from '../../src/nibbles.js';
import { decodeLeafOnPath, decodeNode } from '../../src/nodeCodec.js';
import { expectDsmError, thrown } from './helpers/errors.js';
import { key32, shortKey, value } from './helpers/keys.js';
import { EMPTY_ROOT_HEX, ethRoot, hex, type Model, unhex } from './helpers/reference.js';

interface Sample {
  name: string;
  tree: DsmTree;
  model: Model;
  /** Keys to probe: present and absent. */
  probes: Uint8Array[];
}

function build(name: string, entries: [Uint8Array, Uint8Array][], extraProbes: Uint8Array[] = []): Sample {
  const tree = new DsmTree();
  const model: Model = new Map();
  for (const [k, v] of entries) {
    tree.put(k, v);
    model.set(hex(k), v);
  }
  return {
    name,
    tree,
    model,
    probes: entries
      .slice(0, 100)
      .map(([k]) => k)
      .concat(extraProbes),
  };
}

function samples(): Sample[] {
  const r = new Prng(900);
  const out: Sample[] = [
    build('empty', [], [Uint8Array.of(1)]),
    build('single leaf', [[r.bytes(32), value(r, 40, 40)]], [r.bytes(32)]),
    build(
      'small root (encoding under 32 bytes)',
      [[Uint8Array.of(1), Uint8Array.of(2, 3)]],
      [Uint8Array.of(2)],
    ),
    build(
      'small root branch of embedded leaves',
      [
        [Uint8Array.of(0x01), Uint8Array.of(1)],
        [Uint8Array.of(0x02), Uint8Array.of(2)],
      ],
      [Uint8Array.of(0x03)],
    ),
  ];
  {
    const e: [Uint8Array, Uint8Array][] = [];
    for (let i = 0; i < 300; i++)
      e.push([key32(r, e.length > 0 ? r.pick(e)[0] : undefined), value(r, 1, 100)]);
    out.push(build('random 32-byte keys', e, [r.bytes(32), key32(r, e[0]![0])]));
  }
  {
    const e = new Map<string, Uint8Array>();
    for (let i = 0; i < 150; i++) e.set(hex(shortKey(r)), value(r, 1, 40));
    out.push(
      build(
        'short prefix keys',
        [...e].map(([k, v]) => [unhex(k), v]),
        [shortKey(r), shortKey(r)],
      ),
    );
  }
  return out;
}

/** `b` is `a`: same root, values, absences, proofs, and it encodes to the same bytes. */
function expectSame(a: DsmTree, b: DsmTree, s: Sample): void {
  expect(hex(b.root())).toBe(hex(a.root()));
  for (const k of s.probes) {
    const ea = thrown(() => a.get(k));
    if (ea === undefined) {
      expect(b.get(k)).toEqual(a.get(k));
      expect(b.prove(k).map(hex)).toEqual(a.prove(k).map(hex));
    } else {
      // A stub in `a` is the same stub in `b`.
      expect(ea).toBeInstanceOf(DsmError);
      const eb = expectDsmError(() => b.get(k), (ea as DsmError).code);
      expect(eb.meta.hash).toEqual((ea as DsmError).meta.hash);
    }
  }
  expect(hex(encodeTree(b))).toBe(hex(encodeTree(a)));
}

describe('round trip', () => {
  it.each(samples().map((s) => [s.name, s] as const))('%s', async (_name, s) => {
    expect(hex(s.tree.root())).toBe(s.model.size === 0 ? EMPTY_ROOT_HEX : await ethRoot(s.model));
    const enc = encodeTree(s.tree);
    const back = decodeTree(enc);
    expectSame(s.tree, back, s);
    // The decoded tree does not share memory with the bytes it came from.
    enc.fill(0);
    expectSame(s.tree, back, s);
    // And it is a working tree: writes give what the same writes give the original.
    const r = new Prng(910);
    const orig = s.tree.snapshot();
    const model = new Map(s.model);
    for (let i = 0; i < 30; i++) {
      const k = r.chance(0.5) && model.size > 0 ? unhex(r.pick([...model.keys()])) : r.bytes(r.range(1, 32));
      if (r.chance(0.3)) {
        back.del(k);
        orig.del(k);
        model.delete(hex(k));
      } else {
        const v = value(r, 1, 60);
        back.put(k, v);
        orig.put(k, v);
        model.set(hex(k), v);
      }
    }
    expect(hex(back.root())).toBe(hex(orig.root()));
    expect(hex(back.root())).toBe(model.size === 0 ? EMPTY_ROOT_HEX : await ethRoot(model));
    // The original was not touched by writes to the decoded copy.
    expectSame(s.tree, decodeTree(encodeTree(s.tree)), s);
  });

  it.each([0, 1, 2, 3])('pruned to level %i: stubs survive, the same reads raise MissingNode', (level) => {
    const limit = Error.stackTraceLimit;
    const s = samples().find((x) => x.name === 'random 32-byte keys')!;
    const t = s.tree.snapshot();
    t.prune(level);
    const back = decodeTree(encodeTree(t));
    expectSame(t, back, s);
    const missing = s.probes.filter((k) => thrown(() => t.get(k)) !== undefined);
    expect(missing.length).toBeGreaterThan(level === 3 ? 10 : 100);
    for (const k of missing) expectDsmError(() => back.get(k), DsmErrorCode.MissingNode);
    // A miss is made without a stack trace; every other error still gets one.
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('after').stack).toContain('codec.test');
    // A decoded stub-rooted tree is smaller than a full one and still knows its root.
    expect(encodeTree(t).length).toBeLessThan(encodeTree(s.tree).length);
  });
});

describe('corrupt encodings', () => {
  const r = new Prng(920);
  const all = samples();
  const big = all.find((x) => x.name === 'random 32-byte keys')!.tree;
  const prunedTo = (level: number): DsmTree => {
    const t = big.snapshot();
    t.prune(level);
    return t;
  };
  const trees: [string, DsmTree][] = [
    ...all.map((s) => [s.name, s.tree] as [string, DsmTree]),
    ['pruned to level 2', prunedTo(2)],
    ['pruned to level 1 (a root of stubs)', prunedTo(1)],
    ['pruned to level 0 (a root stub)', prunedTo(0)],
  ];

  /** Decoding `bytes` throws BadEncoding, or gives back exactly the original tree. */
  function outcome(bytes: Uint8Array, original: DsmTree): 'refused' | 'identical' | string {
    let t: DsmTree;
    try {
      t = decodeTree(bytes);
    } catch (e) {
      if (e instanceof DsmError && e.code === DsmErrorCode.BadEncoding) return 'refused';
      return `threw ${e instanceof DsmError ? e.code : String(e)}`;
    }
    const root = hex(t.root());
    return root === hex(original.root()) ? 'identical' : `decoded to another tree (root ${root})`;
  }

  /** Byte positions to try: all of a small encoding, else both ends and a random sample. */
  function positions(n: number): number[] {
    if (n <= 200) return Array.from({ length: n }, (_, i) => i);
    const set = new Set<number>();
    for (let i = 0; i < 40; i++) set.add(i).add(n - 1 - i);
    while (set.size < 160) set.add(r.int(n));
    return [...set].sort((a, b) => a - b);
  }

  it.each(trees)('%s: a flipped byte is refused, never decoded into another tree', (_name, tree) => {
    const enc = encodeTree(tree);
    const wrong: string[] = [];
    for (const at of positions(enc.length)) {
      for (const mask of enc.length > 200 ? [0x01, 0xff] : [0x01, 0x80, 0xff]) {
        const bad = enc.slice();
        bad[at]! ^= mask;
        const o = outcome(bad, tree);
        if (o !== 'refused' && o !== 'identical') wrong.push(`byte ${at} ^ 0x${mask.toString(16)}: ${o}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each(trees)('%s: truncated, or with trailing bytes, is refused', (_name, tree) => {
    const enc = encodeTree(tree);
    for (const len of positions(enc.length)) {
      expectDsmError(() => decodeTree(enc.subarray(0, len)), DsmErrorCode.BadEncoding);
    }
    for (const tail of [Uint8Array.of(0), Uint8Array.of(1), Uint8Array.of(2), r.bytes(33), enc]) {
      expectDsmError(() => decodeTree(Uint8Array.of(...enc, ...tail)), DsmErrorCode.BadEncoding);
    }
  });

  it('bad magic, unknown version, unknown tag, empty input', () => {
    const enc = encodeTree(all.find((x) => x.name === 'short prefix keys')!.tree);
    for (let i = 0; i < 4; i++) {
      const bad = enc.slice();
      bad[i]! ^= 0x20;
      expectDsmError(() => decodeTree(bad), DsmErrorCode.BadEncoding);
    }
    for (const version of [0, 1, 255]) {
      const bad = enc.slice();
      bad[4] = version;
      expectDsmError(() => decodeTree(bad), DsmErrorCode.BadEncoding);
    }
    for (const tag of [3, 4, 0x80, 0xff]) {
      const bad = enc.slice();
      bad[41] = tag; // after the 41-byte header
      expectDsmError(() => decodeTree(bad), DsmErrorCode.BadEncoding);
    }
    expectDsmError(() => decodeTree(new Uint8Array(0)), DsmErrorCode.BadEncoding);
    expectDsmError(() => decodeTree(enc.subarray(0, 5)), DsmErrorCode.BadEncoding);
    for (let i = 0; i < 200; i++) {
      const garbage = Uint8Array.of(...enc.subarray(0, r.int(7)), ...r.bytes(r.int(100)));
      const e = thrown(() => decodeTree(garbage));
      expect(e).toBeInstanceOf(DsmError);
      expect((e as DsmError).code).toBe(DsmErrorCode.BadEncoding);
    }
  });
});

describe('hashedChildren', () => {
  it('names, across a trie, every hashed node but the root exactly once, and nothing else', () => {
    for (const seed of [1, 2, 3]) {
      const r = new Prng(seed);
      const tree = new DsmTree();
      const keys: Uint8Array[] = [];
      // Long keys near each other (extensions, embedded leaves) and short ones (values in branches).
      for (let i = 0; i < 300; i++) {
        const k = r.chance(0.5) ? key32(r, keys.at(-1)) : shortKey(r, 6);
        keys.push(k);
        tree.put(k, value(r, 1, 40));
      }
      for (let i = 0; i < 40; i++) tree.del(keys[r.int(keys.length)]!);
      const root = hex(tree.root());
      const nodes = new Map<string, Uint8Array>();
      tree.forEachNode((h, enc) => nodes.set(hex(Buffer.from(h, 'latin1')), Buffer.from(enc, 'latin1')));
      const named: string[] = [];
      for (const enc of nodes.values()) for (const c of hashedChildren(enc)) named.push(hex(c));
      expect(named.length).toBe(nodes.size - 1);
      expect(new Set(named)).toEqual(new Set([...nodes.keys()].filter((h) => h !== root)));
      const kinds = [...nodes.values()].map((enc) => hashedChildren(enc).length);
      expect(kinds.some((n) => n === 0)).toBe(true); // leaves
      expect(kinds.some((n) => n === 1)).toBe(true); // extensions (or one-child branches)
    }
  });

  it('refuses what is not a trie node', () => {
    expect(thrown(() => hashedChildren(Uint8Array.of(0x83, 1, 2, 3)))).toBeInstanceOf(DsmError);
    expect(thrown(() => hashedChildren(Uint8Array.of(0xc3, 1, 2, 3)))).toBeInstanceOf(DsmError);
    expect(thrown(() => hashedChildren(Uint8Array.of(0xc2, 0x80, 0x80)))).toBeInstanceOf(DsmError);
  });
});

describe('leaves decoded on a path (the fault path)', () => {
  it('decodeLeafOnPath gives what decodeNode gives, for leaves of every depth and value size', () => {
    const r = new Prng(91);
    let fast = 0;
    for (let round = 0; round < 30; round++) {
      const tree = new DsmTree();
      const keys: Uint8Array[] = [];
      for (let i = 0; i < 1 + r.int(300); i++) {
        const k =
          round % 3 === 0
            ? shortKey(r, 4)
            : key32(r, keys.length > 0 && r.chance(0.3) ? r.pick(keys) : undefined);
        keys.push(k);
        tree.put(k, value(r, 1, round % 2 === 0 ? 40 : 200));
      }
      tree.root();
      // Each key's proof ends in its leaf (when it is hashed, not embedded): decode it at its depth.
      for (const k of keys) {
        const proof = tree.prove(k);
        const last = proof[proof.length - 1]!;
        for (let d = 0; d <= Math.min(8, k.length * 2); d++) {
          for (const extra of [-1, r.int(16)]) {
            const prefix: number[] = [];
            for (let i = 0; i < d; i++) prefix.push(keyNibble(k, i));
            if (extra >= 0) prefix.push(extra);
            let general: unknown;
            try {
              general = decodeNode(last, prefix, prefix.length);
            } catch (e) {
              general = e instanceof DsmError ? e.code : e;
            }
            const mine = decodeLeafOnPath(last, k, d, extra);
            if (mine === undefined) continue; // (the general decoder decides)
            fast++;
            expect({ key: hex(Buffer.from(mine.key, 'latin1')), value: mine.value }).toEqual({
              key: hex(Buffer.from((general as { key: string }).key, 'latin1')),
              value: (general as { value: string }).value,
            });
          }
        }
      }
    }
    expect(fast).toBeGreaterThan(1000);
  });

  it('decodeLeafOnPath leaves branches, extensions and malformed leaves to the general decoder', () => {
    const r = new Prng(92);
    const tree = new DsmTree();
    for (let i = 0; i < 200; i++) tree.put(key32(r), value(r, 1, 60));
    tree.root();
    const k = key32(r);
    for (const n of tree.prove(k).slice(0, -1)) expect(decodeLeafOnPath(n, k, 0, -1)).toBeUndefined();
    // A leaf's flag with an odd nibble count left (no byte key ends there), a non-canonical
    // one-byte string, a trailing byte, an empty value: not decoded here.
    for (const bad of ['c3822011', 'c482200080', 'c4820011aa', 'c3812011', 'c5822011aabb', 'c3822080'])
      expect(decodeLeafOnPath(unhex(bad), k, 0, -1)).toBeUndefined();
  });
});

import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from '@jest/globals';
import {
  jsKeccak,
  KECCAK256_EMPTY,
  KECCAK256_RLP_EMPTY,
  type Keccak,
  keccak,
  keccakBackend,
  nativeKeccak,
} from '@monsoon/keccak';
import { Prng } from '@monsoon/test-utils';
import { keccak_256, sha3_256 } from '@noble/hashes/sha3.js';
import { selectKeccak } from '../../src/selectKeccak.js';

// Results of the native backend are Buffers from Node's realm, not Jest's, so compare
// bytes as hex and errors by name rather than with instanceof.
const hex = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');
const ascii = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const concat = (parts: readonly Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));
/** Passes a deliberately ill-typed argument. */
const bad = <T>(value: unknown): T => value as T;

/** Lays `inputs` out back to back, as keccak256Packed takes them. */
function pack(inputs: readonly Uint8Array[], start = 0): { data: Uint8Array; offsets: Uint32Array } {
  const offsets = new Uint32Array(inputs.length + 1);
  offsets[0] = start;
  inputs.forEach((input, i) => {
    offsets[i + 1] = offsets[i]! + input.length;
  });
  return { data: concat([new Uint8Array(start), ...inputs]), offsets };
}

function caught(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to throw, but it returned');
}

type ErrorName = 'TypeError' | 'RangeError';

interface BadCall {
  what: string;
  call: (k: Keccak) => unknown;
  error: ErrorName;
  message: RegExp;
}

const u8 = (n: number): Uint8Array => new Uint8Array(n);
const u32 = (values: number[]): Uint32Array => Uint32Array.from(values);
const i32 = (values: number[]): Int32Array => Int32Array.from(values);

// Three inputs of 40 bytes in 120 bytes of data.
const off3 = (): Uint32Array => u32([0, 40, 80, 120]);

const badCalls: BadCall[] = [
  {
    what: 'keccak256 of a string',
    call: (k) => k.keccak256(bad('abc')),
    error: 'TypeError',
    message: /^keccak256: data must be a Uint8Array, got string$/,
  },
  {
    what: 'keccak256 of a Uint16Array',
    call: (k) => k.keccak256(bad(new Uint16Array(4))),
    error: 'TypeError',
    message: /^keccak256: data must be a Uint8Array, got Uint16Array$/,
  },
  {
    what: 'keccak256Batch of a non-array',
    call: (k) => k.keccak256Batch(bad(u8(4))),
    error: 'TypeError',
    message: /^keccak256Batch: inputs must be an Array of Uint8Array, got Uint8Array$/,
  },
  {
    what: 'keccak256Batch with a non-bytes element',
    call: (k) => k.keccak256Batch(bad([u8(1), 5])),
    error: 'TypeError',
    message: /^keccak256Batch: inputs\[1\] must be a Uint8Array, got number$/,
  },
  {
    what: 'keccak256Packed with offsets as a plain array',
    call: (k) => k.keccak256Packed(u8(10), bad([0, 10]), 1),
    error: 'TypeError',
    message: /^keccak256Packed: offsets must be a Uint32Array, got Array$/,
  },
  {
    what: 'keccak256Packed with a string count',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 10]), bad('1')),
    error: 'TypeError',
    message: /^keccak256Packed: count must be a non-negative integer, got string$/,
  },
  {
    what: 'keccak256Packed with a negative count',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 10]), -1),
    error: 'RangeError',
    message: /^keccak256Packed: count must be a non-negative integer, got -1$/,
  },
  {
    what: 'keccak256Packed with a fractional count',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 10]), 0.5),
    error: 'RangeError',
    message: /^keccak256Packed: count must be a non-negative integer, got 0.5$/,
  },
  {
    what: 'keccak256Packed with too few offsets',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 5]), 2),
    error: 'RangeError',
    message: /^keccak256Packed: offsets must have count \+ 1 = 3 entries, got 2$/,
  },
  {
    what: 'keccak256Packed with an offset past the end of data',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 5, 11]), 2),
    error: 'RangeError',
    message: /^keccak256Packed: offsets\[2\] = 11 is past the end of data \(10 bytes\)$/,
  },
  {
    what: 'keccak256Packed with decreasing offsets',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 6, 4]), 2),
    error: 'RangeError',
    message: /^keccak256Packed: offsets must be non-decreasing, got offsets\[1\] = 6 > offsets\[2\] = 4$/,
  },
  {
    what: 'keccak256Packed with huge offsets that would wrap',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 0xffffffff]), 1),
    error: 'RangeError',
    message: /^keccak256Packed: offsets\[1\] = 4294967295 is past the end of data \(10 bytes\)$/,
  },
  {
    what: 'keccak256Packed with an out that is too small',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 5, 10]), 2, u8(63)),
    error: 'RangeError',
    message: /^keccak256Packed: out must hold count \* 32 = 64 bytes, got 63$/,
  },
  {
    what: 'keccak256Packed with an out that is not bytes',
    call: (k) => k.keccak256Packed(u8(10), u32([0, 5, 10]), 2, bad(null)),
    error: 'TypeError',
    message: /^keccak256Packed: out must be a Uint8Array, got null$/,
  },
  {
    what: 'keccak256Packed with an out overlapping data',
    call: (k) => {
      const memory = u8(128);
      return k.keccak256Packed(memory.subarray(0, 64), u32([0, 64]), 1, memory.subarray(40, 72));
    },
    error: 'RangeError',
    message: /^keccak256Packed: out must not overlap data$/,
  },
  {
    what: 'keccak256Tree with patch as a Uint32Array',
    call: (k) => k.keccak256Tree(u8(120), off3(), bad(u32([0, 0, 0])), 3),
    error: 'TypeError',
    message: /^keccak256Tree: patch must be an Int32Array, got Uint32Array$/,
  },
  {
    what: 'keccak256Tree with too few patch entries',
    call: (k) => k.keccak256Tree(u8(120), off3(), i32([-1, -1]), 3),
    error: 'RangeError',
    message: /^keccak256Tree: patch must have count = 3 entries, got 2$/,
  },
  {
    what: 'keccak256Tree with a patch past the end of data',
    call: (k) => k.keccak256Tree(u8(120), off3(), i32([100, -1, -1]), 3),
    error: 'RangeError',
    message: /^keccak256Tree: patch\[0\] = 100 puts a 32-byte digest past the end of data \(120 bytes\)$/,
  },
  {
    what: 'keccak256Tree with a patch into an earlier input',
    call: (k) => k.keccak256Tree(u8(120), off3(), i32([-1, 4, -1]), 3),
    error: 'RangeError',
    message:
      /^keccak256Tree: patch\[1\] = 4 points into input 0, but a digest may only be patched into a later input \(index > 1\)$/,
  },
  {
    what: 'keccak256Tree with a patch into its own input',
    call: (k) => k.keccak256Tree(u8(120), off3(), i32([0, -1, -1]), 3),
    error: 'RangeError',
    message:
      /^keccak256Tree: patch\[0\] = 0 points into input 0, but a digest may only be patched into a later input \(index > 0\)$/,
  },
  {
    what: 'keccak256Tree with a patch straddling two inputs',
    call: (k) => k.keccak256Tree(u8(120), off3(), i32([50, -1, -1]), 3),
    error: 'RangeError',
    message: /^keccak256Tree: patch\[0\] = 50: bytes 50..82 are not inside a single input$/,
  },
  {
    what: 'keccak256Tree with a patch in data before the first input',
    call: (k) => k.keccak256Tree(u8(120), u32([40, 80, 120]), i32([0, -1]), 2),
    error: 'RangeError',
    message: /^keccak256Tree: patch\[0\] = 0: bytes 0..32 are not inside a single input$/,
  },
  {
    what: 'keccak256Tree with a patch in data after the last input',
    call: (k) => k.keccak256Tree(u8(120), u32([0, 40, 80]), i32([85, -1]), 2),
    error: 'RangeError',
    message: /^keccak256Tree: patch\[0\] = 85: bytes 85..117 are not inside a single input$/,
  },
];

const backends: [string, Keccak | undefined][] = [
  ['js', jsKeccak],
  ['native', nativeKeccak],
];

describe('the native addon', () => {
  it('is built and loaded (the build is part of install, so a missing addon is a bug)', () => {
    expect(nativeKeccak).toBeDefined();
    expect(nativeKeccak?.backend).toBe('native');
  });

  it('is the default backend unless MONSOON_KECCAK=js', () => {
    const expected = process.env.MONSOON_KECCAK === 'js' ? jsKeccak : nativeKeccak;
    expect(keccak).toBe(expected);
    expect(keccakBackend()).toBe(expected?.backend);
  });

  it('loads and hashes in a worker thread (one addon instance per environment)', async () => {
    const addon = fileURLToPath(new URL('../../build/Release/keccak.node', import.meta.url));
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const addon = require(workerData);
       parentPort.postMessage(Buffer.from(addon.keccak256(Buffer.from('abc'))).toString('hex'));`,
      { eval: true, workerData: addon },
    );
    const digest = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(digest).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });
});

describe('constants', () => {
  it('KECCAK256_EMPTY is keccak256 of no bytes', () => {
    expect(hex(KECCAK256_EMPTY)).toBe(hex(keccak_256(new Uint8Array(0))));
  });

  it('KECCAK256_RLP_EMPTY is keccak256(0x80)', () => {
    expect(hex(KECCAK256_RLP_EMPTY)).toBe(hex(keccak_256(Uint8Array.of(0x80))));
  });
});

describe('selectKeccak (MONSOON_KECCAK)', () => {
  const native = { ...jsKeccak, backend: 'native' } as Keccak;

  it('prefers native when unset or empty', () => {
    expect(selectKeccak(undefined, native, undefined)).toBe(native);
    expect(selectKeccak('', native, undefined)).toBe(native);
  });

  it('falls back to js when unset and the addon did not load', () => {
    expect(selectKeccak(undefined, undefined, new Error('no addon'))).toBe(jsKeccak);
  });

  it('forces js with "js"', () => {
    expect(selectKeccak('js', native, undefined)).toBe(jsKeccak);
  });

  it('throws with "native" when the addon did not load, saying why', () => {
    expect(() => selectKeccak('native', undefined, new Error('keccak.node: no such file'))).toThrow(
      /MONSOON_KECCAK=native, but the Keccak addon could not be loaded \(keccak.node: no such file\)/,
    );
    expect(selectKeccak('native', native, undefined)).toBe(native);
  });

  it('rejects unknown values', () => {
    expect(() => selectKeccak('fast', native, undefined)).toThrow(
      'MONSOON_KECCAK must be "native", "js" or unset, got "fast"',
    );
  });
});

describe.each(backends)('%s backend', (name, backend) => {
  const k = (): Keccak => {
    if (backend === undefined) throw new Error(`the ${name} backend is not loaded`);
    return backend;
  };

  it(`reports backend "${name}"`, () => {
    expect(k().backend).toBe(name);
  });

  it.each([
    ['', 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'],
    ['abc', '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45'],
    [
      'The quick brown fox jumps over the lazy dog',
      '4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15',
    ],
  ])('hashes %j to the well-known digest', (input, digest) => {
    expect(hex(k().keccak256(ascii(input)))).toBe(digest);
  });

  it('uses the original Keccak padding, not SHA3-256', () => {
    expect(hex(k().keccak256(u8(0)))).not.toBe(hex(sha3_256(u8(0))));
  });

  it('returns 32 bytes', () => {
    expect(k().keccak256(u8(5)).length).toBe(32);
  });

  // Around the 136-byte rate: padding in the same block, a whole extra block, and several blocks.
  it.each([0, 1, 31, 32, 33, 135, 136, 137, 271, 272, 273, 532, 1000])(
    'matches @noble/hashes at %i bytes',
    (length) => {
      const input = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      expect(hex(k().keccak256(input))).toBe(hex(keccak_256(input)));
    },
  );

  it('matches @noble/hashes on random inputs of every length 0..2000', () => {
    const rand = new Prng(0x5eed);
    for (let length = 0; length <= 2000; length++) {
      const input = rand.bytes(length);
      const got = hex(k().keccak256(input));
      if (got !== hex(keccak_256(input))) {
        throw new Error(`digest mismatch at length ${length}: ${got}`);
      }
    }
  });

  it('hashes views at an offset and Buffers', () => {
    const memory = new Prng(1).bytes(300);
    const view = memory.subarray(7, 250);
    expect(hex(k().keccak256(view))).toBe(hex(keccak_256(view.slice())));
    expect(hex(k().keccak256(Buffer.from('abc')))).toBe(
      '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45',
    );
  });

  it('does not modify its input', () => {
    const input = new Prng(2).bytes(200);
    const copy = input.slice();
    k().keccak256(input);
    expect(hex(input)).toBe(hex(copy));
  });

  describe('keccak256Batch', () => {
    it('equals hashing each input alone', () => {
      const rand = new Prng(3);
      const inputs = Array.from({ length: 300 }, () => rand.bytes(rand.int(600)));
      inputs.push(u8(0), memoryView());
      expect(hex(k().keccak256Batch(inputs))).toBe(hex(concat(inputs.map((x) => keccak_256(x.slice())))));
    });

    it('returns no bytes for no inputs', () => {
      expect(k().keccak256Batch([]).length).toBe(0);
    });
  });

  describe('keccak256Packed', () => {
    const rand = new Prng(4);
    const inputs = Array.from({ length: 200 }, (_, i) => rand.bytes(i % 5 === 0 ? 0 : rand.int(700)));
    const expected = hex(concat(inputs.map((x) => keccak_256(x))));

    it('equals hashing each input alone', () => {
      const { data, offsets } = pack(inputs);
      expect(hex(k().keccak256Packed(data, offsets, inputs.length))).toBe(expected);
    });

    it('writes into a given out and returns it', () => {
      const { data, offsets } = pack(inputs, 13);
      const memory = u8(32 * inputs.length + 64);
      const out = memory.subarray(16, 16 + 32 * inputs.length + 8);
      expect(k().keccak256Packed(data, offsets, inputs.length, out)).toBe(out);
      expect(hex(out.subarray(0, 32 * inputs.length))).toBe(expected);
      expect(hex(out.subarray(32 * inputs.length))).toBe('00'.repeat(8));
    });

    it('hashes only the first count inputs', () => {
      const { data, offsets } = pack(inputs);
      expect(hex(k().keccak256Packed(data, offsets, 3))).toBe(expected.slice(0, 3 * 64));
    });

    it('accepts count 0', () => {
      expect(k().keccak256Packed(u8(0), u32([0]), 0).length).toBe(0);
    });

    it('hashes any count of inputs around the block edges (four or eight at a time where the CPU allows)', () => {
      // 1..19 inputs: whole groups of four and of eight and every tail; lengths either side of one
      // and two 136-byte blocks, so inputs that share a permutation absorb different numbers of blocks.
      const rand = new Prng(9);
      const edges = [0, 1, 31, 32, 135, 136, 137, 271, 272, 273, 600];
      for (let count = 1; count <= 19; count++) {
        const some = Array.from({ length: count }, () => rand.bytes(edges[rand.int(edges.length)]!));
        const { data, offsets } = pack(some);
        expect(hex(k().keccak256Packed(data, offsets, count))).toBe(
          hex(concat(some.map((x) => keccak_256(x)))),
        );
        expect(hex(k().keccak256Batch(some))).toBe(hex(concat(some.map((x) => keccak_256(x)))));
      }
    });
  });

  describe('keccak256Tree', () => {
    // A 3-level tree hashed children first: leaves 0..3, branches 4 (leaves 0, 1) and
    // 5 (leaves 2, 3), root 6 (branches 4, 5). Each parent is a prefix, two 32-byte
    // holes for its children's digests and a suffix.
    function buildTree() {
      const rand = new Prng(5);
      const leaves = [10, 40, 135, 200].map((length) => rand.bytes(length));
      const parent = (tag: number) =>
        concat([Uint8Array.of(0xf8, tag), u8(32), u8(32), Uint8Array.of(tag, tag)]);
      const nodes = [...leaves, parent(4), parent(5), parent(6)];
      const { data, offsets } = pack(nodes, 3);
      const hole = (node: number, child: 0 | 1) => offsets[node]! + 2 + 32 * child;
      const patch = i32([hole(4, 0), hole(4, 1), hole(5, 0), hole(5, 1), hole(6, 0), hole(6, 1), -1]);

      // The same by hand, one hash at a time.
      const filled = nodes.map((n) => n.slice());
      const digests: Uint8Array[] = [];
      const parentOf = [4, 4, 5, 5, 6, 6];
      for (let i = 0; i < filled.length; i++) {
        digests.push(keccak_256(filled[i]!));
        if (i < parentOf.length) filled[parentOf[i]!]!.set(digests[i]!, 2 + 32 * (i % 2));
      }
      return { data, offsets, patch, count: nodes.length, digests, filled: pack(filled, 3).data };
    }

    it('hashes a Merkle tree bottom-up, patching each digest into its parent', () => {
      const { data, offsets, patch, count, digests, filled } = buildTree();
      const out = k().keccak256Tree(data, offsets, patch, count);
      expect(hex(out)).toBe(hex(concat(digests)));
      expect(hex(data)).toBe(hex(filled));
    });

    it('writes into a given out and returns it', () => {
      const { data, offsets, patch, count, digests } = buildTree();
      const out = u8(32 * count);
      expect(k().keccak256Tree(data, offsets, patch, count, out)).toBe(out);
      expect(hex(out.subarray(32 * 6))).toBe(hex(digests[6]!));
    });

    it('without patches, equals keccak256Packed', () => {
      const { data, offsets, count } = buildTree();
      const none = new Int32Array(count).fill(-1);
      expect(hex(k().keccak256Tree(data.slice(), offsets, none, count))).toBe(
        hex(k().keccak256Packed(data, offsets, count)),
      );
    });

    // A forest in post-order as TreeHasher flushes one: parents of 0-16 children at random depths,
    // inputs of trie-node lengths (so many of one length can share a permutation), empty inputs
    // and roots whose digests patch nothing. By hand: one input at a time in index order.
    function randomForest(seed: number) {
      const rand = new Prng(seed);
      const nodes: Uint8Array[] = [];
      const holes: { node: number; at: number }[] = []; // per node: where its digest goes
      const emit = (depth: number): number => {
        const kids = depth < 5 && rand.chance(0.7) ? rand.int(17) : 0;
        const ids = Array.from({ length: kids }, () => emit(depth + 1));
        const parts: Uint8Array[] = [];
        let at = 0;
        const slots: number[] = [];
        for (let c = 0; c < kids; c++) {
          const filler = rand.bytes(rand.chance(0.8) ? 1 : rand.int(40));
          parts.push(filler, u8(32));
          slots.push(at + filler.length);
          at += filler.length + 32;
        }
        const tail = rand.bytes(kids === 0 ? [0, 1, 70, 110, 135, 136, 300][rand.int(7)]! : rand.int(8));
        parts.push(tail);
        const id = nodes.length;
        nodes.push(concat(parts));
        ids.forEach((child, c) => {
          holes[child] = { node: id, at: slots[c]! };
        });
        return id;
      };
      while (nodes.length < 300) emit(rand.int(3));
      const { data, offsets } = pack(nodes, 5);
      const patch = new Int32Array(nodes.length).fill(-1);
      holes.forEach((h, i) => {
        if (h !== undefined) patch[i] = offsets[h.node]! + h.at;
      });
      const filled = data.slice();
      const digests: Uint8Array[] = [];
      for (let i = 0; i < nodes.length; i++) {
        digests.push(keccak_256(filled.subarray(offsets[i]!, offsets[i + 1]!)));
        if (patch[i]! >= 0) filled.set(digests[i]!, patch[i]!);
      }
      return { data, offsets, patch, count: nodes.length, digests, filled };
    }

    it('hashes a random forest as one input at a time in order would', () => {
      for (const seed of [11, 12, 13]) {
        const { data, offsets, patch, count, digests, filled } = randomForest(seed);
        const out = k().keccak256Tree(data, offsets, patch, count);
        expect(hex(out)).toBe(hex(concat(digests)));
        expect(hex(data)).toBe(hex(filled));
      }
    });

    it('changes nothing when it rejects a later patch', () => {
      const { data, offsets, patch, count } = buildTree();
      const before = hex(data);
      const out = u8(32 * count);
      patch[5] = offsets[0]!; // branch 5's digest into leaf 0: an earlier input
      expect(() => k().keccak256Tree(data, offsets, patch, count, out)).toThrow(/patch\[5\]/);
      expect(hex(data)).toBe(before);
      expect(hex(out)).toBe('00'.repeat(32 * count));
    });
  });

  describe('keccak256BatchAsync', () => {
    it('equals keccak256Batch', async () => {
      const rand = new Prng(6);
      const inputs = Array.from({ length: 1000 }, () => rand.bytes(rand.int(300)));
      const promise = k().keccak256BatchAsync(inputs);
      const expected = hex(k().keccak256Batch(inputs));
      inputs[0]!.fill(0xaa); // the native backend copied the inputs during the call
      expect(hex(await promise)).toBe(expected);
    });

    it('resolves to no bytes for no inputs', async () => {
      expect((await k().keccak256BatchAsync([])).length).toBe(0);
    });

    it('rejects (rather than throws) on bad arguments', async () => {
      let promise: Promise<Uint8Array> | undefined;
      expect(() => {
        promise = k().keccak256BatchAsync(bad([u8(1), 'x']));
      }).not.toThrow();
      const error = await promise!.then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.name).toBe('TypeError');
      expect(error?.message).toBe('keccak256BatchAsync: inputs[1] must be a Uint8Array, got string');
    });
  });

  it.each(badCalls)('rejects $what', ({ call, error, message }) => {
    const e = caught(() => call(k()));
    expect(e.name).toBe(error);
    expect(e.message).toMatch(message);
  });
});

describe('both backends', () => {
  it.each(badCalls)('reject $what with the same error', ({ call }) => {
    const fromJs = caught(() => call(jsKeccak));
    const fromNative = caught(() => call(nativeKeccak!));
    expect({ name: fromNative.name, message: fromNative.message }).toEqual({
      name: fromJs.name,
      message: fromJs.message,
    });
  });

  it('agree on random packed trees of random sizes', () => {
    const rand = new Prng(7);
    for (let round = 0; round < 50; round++) {
      const count = 1 + rand.int(40);
      const inputs = Array.from({ length: count }, () => rand.bytes(32 + rand.int(300)));
      const { data, offsets } = pack(inputs);
      // Each input but the last patches its digest somewhere inside a random later input.
      const patch = i32(
        inputs.map((_, i) => {
          if (i === count - 1 || rand.next() < 0.2) return -1;
          const j = i + 1 + rand.int(count - i - 1);
          return offsets[j]! + rand.int(inputs[j]!.length - 31);
        }),
      );
      const jsData = data.slice();
      const nativeData = data.slice();
      expect(hex(nativeKeccak!.keccak256Tree(nativeData, offsets, patch, count))).toBe(
        hex(jsKeccak.keccak256Tree(jsData, offsets, patch, count)),
      );
      expect(hex(nativeData)).toBe(hex(jsData));
    }
  });
});

/** A 50-byte view into the middle of a larger buffer. */
function memoryView(): Uint8Array {
  return new Prng(8).bytes(200).subarray(60, 110);
}

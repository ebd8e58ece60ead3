import { types } from 'node:util';

// Argument checks for the JS backend. They mirror ParsePackedCall() and friends in
// keccak.cc check for check and message for message, so both backends reject the same
// calls with the same errors.

/** What a value is, for error messages ("number", "Array", "Uint16Array", ...). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  if (Array.isArray(value)) return 'Array';
  if (types.isTypedArray(value)) return Object.prototype.toString.call(value).slice(8, -1);
  if (types.isDataView(value)) return 'DataView';
  if (types.isArrayBuffer(value)) return 'ArrayBuffer';
  return 'object';
}

/**
 * `value` as a Uint8Array of this realm, or a TypeError naming `fn` and `name`.
 * Buffers and Uint8Arrays from another realm (a vm context, Jest) are accepted, as
 * the addon accepts them, and re-viewed so `@noble/hashes` accepts them too.
 */
export function requireBytes(value: unknown, fn: string, name: string): Uint8Array {
  if (!types.isUint8Array(value))
    throw new TypeError(`${fn}: ${name} must be a Uint8Array, got ${describe(value)}`);
  if (value instanceof Uint8Array) return value;
  const foreign: Uint8Array = value; // TypeScript would narrow `value` to never here
  return new Uint8Array(foreign.buffer, foreign.byteOffset, foreign.byteLength);
}

/** `inputs` as an array, or a TypeError naming `fn`. */
export function requireInputs(value: unknown, fn: string): readonly unknown[] {
  if (!Array.isArray(value))
    throw new TypeError(`${fn}: inputs must be an Array of Uint8Array, got ${describe(value)}`);
  return value;
}

/** The validated arguments of keccak256Packed / keccak256Tree. */
export interface PackedCall {
  data: Uint8Array;
  offsets: Uint32Array;
  patch: Int32Array | undefined;
  count: number;
  out: Uint8Array;
}

/**
 * Validates keccak256Packed(data, offsets, count, out?) or, when `patch` is given,
 * keccak256Tree(data, offsets, patch, count, out?); allocates `out` if omitted.
 */
export function parsePackedCall(
  fn: string,
  dataArg: unknown,
  offsetsArg: unknown,
  patchArg: unknown,
  countArg: unknown,
  outArg: unknown,
  tree: boolean,
): PackedCall {
  const data = requireBytes(dataArg, fn, 'data');
  if (!types.isUint32Array(offsetsArg)) {
    throw new TypeError(`${fn}: offsets must be a Uint32Array, got ${describe(offsetsArg)}`);
  }
  const offsets = offsetsArg;
  let patch: Int32Array | undefined;
  if (tree) {
    if (!types.isInt32Array(patchArg)) {
      throw new TypeError(`${fn}: patch must be an Int32Array, got ${describe(patchArg)}`);
    }
    patch = patchArg;
  }

  if (typeof countArg !== 'number') {
    throw new TypeError(`${fn}: count must be a non-negative integer, got ${describe(countArg)}`);
  }
  if (!Number.isSafeInteger(countArg) || countArg < 0) {
    throw new RangeError(`${fn}: count must be a non-negative integer, got ${String(countArg)}`);
  }
  const count = countArg;
  if (count + 1 > offsets.length) {
    throw new RangeError(`${fn}: offsets must have count + 1 = ${count + 1} entries, got ${offsets.length}`);
  }
  if (patch !== undefined && patch.length < count) {
    throw new RangeError(`${fn}: patch must have count = ${count} entries, got ${patch.length}`);
  }

  const outBytes = count * 32;
  let out: Uint8Array | undefined;
  if (outArg !== undefined) {
    out = requireBytes(outArg, fn, 'out');
    if (out.length < outBytes) {
      throw new RangeError(`${fn}: out must hold count * 32 = ${outBytes} bytes, got ${out.length}`);
    }
    const o = out.byteOffset;
    const d = data.byteOffset;
    if (
      outBytes > 0 &&
      data.length > 0 &&
      out.buffer === data.buffer &&
      o < d + data.length &&
      d < o + outBytes
    ) {
      throw new RangeError(`${fn}: out must not overlap data`);
    }
  }

  for (let i = 0; i < count; i++) {
    if (offsets[i]! > offsets[i + 1]!) {
      throw new RangeError(
        `${fn}: offsets must be non-decreasing, got offsets[${i}] = ${offsets[i]} > offsets[${i + 1}] = ${offsets[i + 1]}`,
      );
    }
  }
  if (offsets[count]! > data.length) {
    throw new RangeError(
      `${fn}: offsets[${count}] = ${offsets[count]} is past the end of data (${data.length} bytes)`,
    );
  }

  if (patch !== undefined) {
    for (let i = 0; i < count; i++) {
      const p = patch[i]!;
      if (p < 0) continue;
      const at = `${fn}: patch[${i}] = ${p}`;
      if (p + 32 > data.length) {
        throw new RangeError(`${at} puts a 32-byte digest past the end of data (${data.length} bytes)`);
      }
      // One past the input holding byte p: the first j <= count with offsets[j] > p
      // among offsets[0..count).
      let lo = 0;
      let hi = count;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (offsets[mid]! <= p) lo = mid + 1;
        else hi = mid;
      }
      const j = lo;
      if (j === 0 || offsets[j]! < p + 32) {
        throw new RangeError(`${at}: bytes ${p}..${p + 32} are not inside a single input`);
      }
      if (j - 1 <= i) {
        throw new RangeError(
          `${at} points into input ${j - 1}, but a digest may only be patched into a later input (index > ${i})`,
        );
      }
    }
  }

  return { data, offsets, patch, count, out: out ?? new Uint8Array(outBytes) };
}

/**
 * batchGetResponseBytes (a storage node's BatchGet answer written as bytes) held to the generated
 * encoder of batchGetResponseToProto's message: the same bytes for random answers with their bag
 * as a list or packed (withPackedBag), and the same refusal (class, code, message) for every
 * check the converter makes.
 */
import { describe, expect, it } from '@jest/globals';
import {
  type AccountResult,
  atNumber,
  type BatchGetRequest,
  type BatchGetResponse,
  batchGetResponseBytes,
  batchGetResponseToProto,
  storagePb,
  withPackedBag,
} from '@monsoon/protocol';
import { Prng } from '@monsoon/test-utils';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function outcome(f: () => Uint8Array): string {
  try {
    return hex(f());
  } catch (e) {
    const err = e as Error & { code?: unknown };
    return `${err.constructor.name} ${String(err.code)} ${err.message}`;
  }
}

/** What the generated encoder writes for the converter's message. */
const reference = (r: BatchGetResponse, q?: BatchGetRequest): Uint8Array =>
  storagePb.BatchGetResponse.encode(batchGetResponseToProto(r, q)).finish();

/** `nodes` as withPackedBag takes them: the first `k` in one buffer, the others as they are. */
function packed(r: BatchGetResponse, nodes: Uint8Array[], k: number): BatchGetResponse {
  const first = nodes.slice(0, k);
  const bytes = new Uint8Array(first.reduce((n, x) => n + x.length, 0) + 7).subarray(3, -4);
  const ends = new Int32Array(k);
  let at = 0;
  first.forEach((x, i) => {
    bytes.set(x, at);
    at += x.length;
    ends[i] = at;
  });
  return withPackedBag(r, { bytes, ends, rest: nodes.slice(k) });
}

function randomResult(r: Prng): AccountResult {
  return {
    address: r.bytes(20),
    accountRlp: r.chance(0.2) ? undefined : r.bytes(r.range(1, 110)),
    slotValues: Array.from({ length: r.chance(0.7) ? 0 : r.range(1, 3) }, () =>
      r.chance(0.3) ? new Uint8Array(0) : Uint8Array.of(1 + r.int(255), ...r.bytes(r.int(31))),
    ),
    code: r.chance(0.8) ? new Uint8Array(0) : r.bytes(r.range(1, 300)),
  };
}

function randomNode(r: Prng): Uint8Array {
  const size = r.pick([1, 2, 31, 100, 127, 128, 129, 532, 16383, 16384, 20000]);
  return r.bytes(r.chance(0.5) ? size : r.range(1, 600));
}

describe('batchGetResponseBytes', () => {
  it('writes what the generated encoder writes, bag listed or packed', () => {
    const r = new Prng(31);
    for (let i = 0; i < 150; i++) {
      const results = Array.from({ length: r.int(30) }, () => randomResult(r));
      const nodes = Array.from({ length: r.int(40) }, () => randomNode(r));
      const base = {
        blockHash: r.bytes(32),
        number: r.pick([0n, 1n, 127n, 128n, (1n << 64n) - 1n, BigInt(r.u32())]),
        results,
      };
      const request: BatchGetRequest = {
        at: atNumber(1n),
        queries: results.map((x) => ({
          address: x.address,
          slots: x.slotValues.map(() => r.bytes(32)),
          code: false,
        })),
        omitLevels: 0,
      };
      const want = hex(reference({ ...base, bag: nodes }, request));
      expect(hex(batchGetResponseBytes({ ...base, bag: nodes }, request))).toBe(want);
      const k = r.int(nodes.length + 1);
      const p = packed({ ...base, bag: nodes }, nodes, k);
      expect(hex(batchGetResponseBytes(p, r.chance(0.5) ? request : undefined))).toBe(want);
      // The packed answer's bag lists the same nodes.
      expect(p.bag.map(hex)).toEqual(nodes.map(hex));
      expect(p.bag.every((n) => n.constructor === Uint8Array)).toBe(true);
    }
  });

  it('refuses what the converter refuses, with its error', () => {
    const r = new Prng(32);
    const good = (): BatchGetResponse => ({
      blockHash: r.bytes(32),
      number: 5n,
      results: [randomResult(r), { ...randomResult(r), slotValues: [Uint8Array.of(1), new Uint8Array(0)] }],
      bag: [r.bytes(40), r.bytes(532), r.bytes(3)],
    });
    const requestFor = (x: BatchGetResponse): BatchGetRequest => ({
      at: atNumber(1n),
      queries: x.results.map((a) => ({
        address: a.address,
        slots: a.slotValues.map(() => r.bytes(32)),
        code: false,
      })),
      omitLevels: 0,
    });
    const edits: [
      string,
      (x: BatchGetResponse) => BatchGetResponse,
      (q: BatchGetRequest) => BatchGetRequest,
    ][] = [
      [
        'empty account RLP',
        (x) => ({ ...x, results: [{ ...x.results[0]!, accountRlp: new Uint8Array(0) }, x.results[1]!] }),
        (q) => q,
      ],
      [
        'a 19-byte address',
        (x) => ({ ...x, results: [x.results[0]!, { ...x.results[1]!, address: r.bytes(19) }] }),
        (q) => q,
      ],
      [
        'a slot value with a leading zero',
        (x) => ({
          ...x,
          results: [
            x.results[0]!,
            { ...x.results[1]!, slotValues: [Uint8Array.of(0, 1), new Uint8Array(0)] },
          ],
        }),
        (q) => q,
      ],
      [
        'a 33-byte slot value',
        (x) => ({
          ...x,
          results: [
            x.results[0]!,
            { ...x.results[1]!, slotValues: [Uint8Array.of(1), new Uint8Array(33).fill(1)] },
          ],
        }),
        (q) => q,
      ],
      ['a result too few', (x) => ({ ...x, results: x.results.slice(0, 1) }), (q) => q],
      [
        'another address',
        (x) => x,
        (q) => ({ ...q, queries: [q.queries[0]!, { ...q.queries[1]!, address: r.bytes(20) }] }),
      ],
      [
        'a slot value too few',
        (x) => x,
        (q) => ({
          ...q,
          queries: [q.queries[0]!, { ...q.queries[1]!, slots: [r.bytes(32), r.bytes(32), r.bytes(32)] }],
        }),
      ],
      ['a 31-byte block hash', (x) => ({ ...x, blockHash: r.bytes(31) }), (q) => q],
      ['number 2^64', (x) => ({ ...x, number: 1n << 64n }), (q) => q],
      ['an empty first node', (x) => ({ ...x, bag: [new Uint8Array(0), ...x.bag] }), (q) => q],
      ['an empty middle node', (x) => ({ ...x, bag: [x.bag[0]!, new Uint8Array(0), ...x.bag] }), (q) => q],
      ['an empty last node', (x) => ({ ...x, bag: [...x.bag, new Uint8Array(0)] }), (q) => q],
    ];
    for (const [what, edit, editRequest] of edits) {
      const x = good();
      const bad = edit(x);
      const q = editRequest(requestFor(x));
      const want = outcome(() => reference(bad, q));
      expect(want).toMatch(/Error/);
      for (let k = 0; k <= bad.bag.length; k++) {
        const forms = [bad, packed(bad, bad.bag as Uint8Array[], k)];
        for (const form of forms)
          expect({ what, k, got: outcome(() => batchGetResponseBytes(form, q)) }).toEqual({
            what,
            k,
            got: want,
          });
      }
    }
  });
});

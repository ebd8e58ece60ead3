/**
 * The shared writer behind every generated gRPC serializer (src/encodeMessage.ts) gives each
 * message exactly ts-proto's own encoding, whatever was encoded before it, and bytes of its own.
 */

import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from '@jest/globals';
import { StorageServiceDefinition, storagePb } from '@monsoon/protocol';
import { encodeMessage, encodeToBuffer } from '../../src/encodeMessage.js';

/** A BatchGet answer of `n` accounts with 3n proof nodes; `seed` varies every byte. */
function answer(n: number, seed: number): storagePb.BatchGetResponse {
  const bytes = (len: number, salt: number) =>
    Uint8Array.from({ length: len }, (_, i) => (i * 31 + salt) & 0xff);
  return {
    blockHash: bytes(32, seed),
    number: BigInt(seed),
    results: Array.from({ length: n }, (_, i) => ({
      address: bytes(20, seed + i),
      accountRlp: bytes(70 + (i % 5), seed * 7 + i),
      slotValues: i % 2 === 0 ? [bytes(32, i)] : [],
      code: new Uint8Array(0),
    })),
    bag: { nodes: Array.from({ length: 3 * n }, (_, i) => bytes(i % 3 === 0 ? 532 : 110, seed + 3 * i)) },
  };
}

const fresh = (m: storagePb.BatchGetResponse) =>
  storagePb.BatchGetResponse.encode(m, new BinaryWriter()).finish();

describe('encodeMessage', () => {
  it("gives ts-proto's encoding for messages large and small, in any order", () => {
    // Large after small (the writer grows), then small after large (what is left must not show).
    for (const [n, seed] of [
      [1, 1],
      [400, 2],
      [0, 3],
      [2, 4],
      [1000, 5],
      [3, 6],
    ] as const) {
      const m = answer(n, seed);
      expect(encodeMessage(storagePb.BatchGetResponse, m)).toEqual(fresh(m));
      expect(new Uint8Array(encodeToBuffer(storagePb.BatchGetResponse, m))).toEqual(fresh(m));
    }
  });

  it('hands out bytes no later message writes over', () => {
    const first = answer(50, 7);
    const kept = encodeToBuffer(storagePb.BatchGetResponse, first);
    for (let seed = 8; seed < 12; seed++) encodeToBuffer(storagePb.BatchGetResponse, answer(50, seed));
    expect(new Uint8Array(kept)).toEqual(fresh(first));
  });

  it('decodes a frame grpc-js hands over (a Buffer) into plain Uint8Array fields with the same bytes', () => {
    const m = answer(30, 15);
    const frame = encodeToBuffer(storagePb.BatchGetResponse, m);
    // grpc-js hands a deserializer a Buffer view into a larger chunk.
    const chunk = Buffer.alloc(frame.length + 16);
    frame.copy(chunk, 8);
    const back = StorageServiceDefinition.batchGet.responseDeserialize(chunk.subarray(8, 8 + frame.length));
    const fields = [
      back.blockHash,
      ...back.results.flatMap((r) => [r.address, r.accountRlp, ...r.slotValues]),
      ...back.bag!.nodes,
    ];
    expect(fields.every((f) => f.constructor === Uint8Array)).toBe(true);
    expect(back).toEqual(storagePb.BatchGetResponse.decode(fresh(m)));
  });

  it('encodes correctly after a message that threw part-way', () => {
    const bad = { ...answer(20, 13), number: 1n << 64n };
    // The number field comes after the block hash: the writer has begun the message when it throws.
    expect(() => encodeMessage(storagePb.BatchGetResponse, bad)).toThrow(/too large/);
    const good = answer(5, 14);
    expect(encodeMessage(storagePb.BatchGetResponse, good)).toEqual(fresh(good));
  });
});

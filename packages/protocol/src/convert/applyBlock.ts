/**
 * Converters for ApplyBlock. These are the strictest: a storage node applies what they let
 * through, so an update that is malformed or contradicts itself is refused here, before any
 * version exists.
 */

import { byteKey, bytesToBigint, bytesToHex } from '@monsoon/util';
import type {
  AccountUpdate,
  ApplyBlockRequest,
  ApplyBlockResponse,
  ShardUpdate,
  StorageWrite,
} from '../domain/applyBlock.js';
import type * as commonPb from '../generated/monsoon/common/v1/common.js';
import type * as pb from '../generated/monsoon/storage/v1/storage.js';
import { ApplyBlockRequest as PbApplyBlockRequest } from '../generated/monsoon/storage/v1/storage.js';
import { ProtocolErrorCode } from '../protocolError.js';
import {
  ADDRESS_LENGTH,
  consistent,
  eachIn,
  fail,
  fixed,
  HASH_LENGTH,
  minimalBytes,
  nonEmpty,
  plain,
  quantityBytes,
  SLOT_LENGTH,
  trimmedBytes,
  uint64,
} from './checks.js';
import { shardRootFromProto, shardRootToProto } from './common.js';
import { everyShard, shardCount, uniqueShards } from './shards.js';

/** What the converters know about the receiver. */
export interface ShardContext {
  /**
   * The state's shard count (16 or 256). When unknown, ApplyBlockRequest takes it from the
   * number of expected roots and ApplyBlockResponse only checks shards are listed once.
   */
  readonly shardCount?: number;
}

const NO_BYTES = new Uint8Array(0);

/** An account's storage writes, named relative to the account (see eachIn). */
function storageWrites(ws: readonly (pb.StorageWrite | StorageWrite)[]): StorageWrite[] {
  const seen = new Set<string>();
  return eachIn(ws, 'storage', (w) => {
    const slot = fixed(w.slot, SLOT_LENGTH, 'slot');
    const k = byteKey(slot);
    if (seen.has(k))
      fail(ProtocolErrorCode.Inconsistent, 'slot', 'each slot at most once', `${bytesToHex(slot)} again`);
    seen.add(k);
    return { slot, value: trimmedBytes(w.value, 32, 'value') };
  });
}

/** An account update, its fields named relative to it (see eachIn). */
function accountUpdateToProto(u: AccountUpdate): pb.AccountUpdate {
  const address = fixed(u.address, ADDRESS_LENGTH, 'address');
  if (u.deleted) {
    return {
      address,
      deleted: true,
      nonce: 0n,
      balance: NO_BYTES,
      code: NO_BYTES,
      clearStorage: false,
      storage: [],
    };
  }
  return {
    address,
    deleted: false,
    nonce: uint64(u.nonce, 'nonce'),
    balance: quantityBytes(u.balance, 32, 'balance'),
    // Empty code is what every account starts with, so "created with empty code" needs no bytes.
    code: u.code === undefined ? NO_BYTES : plain(u.code),
    clearStorage: u.clearStorage,
    storage: storageWrites(u.storage),
  };
}

/** An account update, its fields named relative to it (see eachIn). */
function accountUpdateFromProto(u: pb.AccountUpdate): AccountUpdate {
  const address = fixed(u.address, ADDRESS_LENGTH, 'address');
  if (u.deleted) {
    const set = [
      u.nonce !== 0n && `nonce ${u.nonce}`,
      u.balance.length > 0 && 'a balance',
      u.code.length > 0 && 'code',
      u.clearStorage && 'clearStorage',
      u.storage.length > 0 && `${u.storage.length} storage writes`,
    ].filter((s) => s !== false);
    consistent(set.length === 0, '', 'no other field set on a deleted account', set.join(', '));
    return { deleted: true, address };
  }
  return {
    deleted: false,
    address,
    nonce: uint64(u.nonce, 'nonce'),
    balance: bytesToBigint(minimalBytes(u.balance, 32, 'balance')),
    code: u.code.length === 0 ? undefined : plain(u.code),
    clearStorage: u.clearStorage,
    storage: storageWrites(u.storage),
  };
}

/** Checks that no address is updated twice anywhere in the block. */
function checkAccountsOnce(shards: readonly ShardUpdate[]): void {
  const seen = new Set<string>();
  shards.forEach((s, i) => {
    s.accounts.forEach((a, j) => {
      const k = byteKey(a.address);
      if (seen.has(k))
        fail(
          ProtocolErrorCode.Inconsistent,
          `shards[${i}].accounts[${j}].address`,
          'each account updated at most once',
          `${bytesToHex(a.address)} again`,
        );
      seen.add(k);
    });
  });
}

export function applyBlockRequestToProto(r: ApplyBlockRequest, ctx: ShardContext = {}): pb.ApplyBlockRequest {
  const headerRlp = nonEmpty(r.headerRlp, 'headerRlp');
  const count = everyShard(r.expectedRoots, ctx.shardCount, 'expectedRoots');
  uniqueShards(r.shards, count, 'shards');
  checkAccountsOnce(r.shards);
  return {
    headerRlp,
    shards: eachIn(r.shards, 'shards', (s) => ({
      shard: s.shard,
      accounts: eachIn(s.accounts, 'accounts', accountUpdateToProto),
    })),
    expectedRoots: r.expectedRoots.map((x, i) => shardRootToProto(x, count, `expectedRoots[${i}]`)),
  };
}

export function applyBlockRequestFromProto(
  r: pb.ApplyBlockRequest,
  ctx: ShardContext = {},
): ApplyBlockRequest {
  const headerRlp = nonEmpty(r.headerRlp, 'headerRlp');
  const count = everyShard(r.expectedRoots, ctx.shardCount, 'expectedRoots');
  uniqueShards(r.shards, count, 'shards');
  const shards: ShardUpdate[] = eachIn(r.shards, 'shards', (s) => ({
    shard: s.shard,
    accounts: eachIn(s.accounts, 'accounts', accountUpdateFromProto),
  }));
  checkAccountsOnce(shards);
  return {
    headerRlp,
    shards,
    expectedRoots: r.expectedRoots.map((x, i) => shardRootFromProto(x, count, `expectedRoots[${i}]`)),
  };
}

/** The context's shard count, checked when given. */
function knownCount(ctx: ShardContext): number | undefined {
  return ctx.shardCount === undefined ? undefined : shardCount(ctx.shardCount, 'shardCount');
}

export function applyBlockResponseToProto(
  r: ApplyBlockResponse,
  ctx: ShardContext = {},
): pb.ApplyBlockResponse {
  const count = knownCount(ctx);
  uniqueShards(r.roots, count, 'roots');
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    roots: r.roots.map((x, i) => shardRootToProto(x, count, `roots[${i}]`)),
  };
}

export function applyBlockResponseFromProto(
  r: pb.ApplyBlockResponse,
  ctx: ShardContext = {},
): ApplyBlockResponse {
  const count = knownCount(ctx);
  uniqueShards(r.roots, count, 'roots');
  return {
    blockHash: fixed(r.blockHash, HASH_LENGTH, 'blockHash'),
    number: uint64(r.number, 'number'),
    roots: r.roots.map((x, i) => shardRootFromProto(x, count, `roots[${i}]`)),
  };
}

/**
 * applyBlockRequestFromProto of the request's protobuf bytes, read straight into the domain
 * request: no generated message per account update, storage write and shard, no second object
 * for each. Anything out of the way (an unknown or repeated field, a varint wider than the fields
 * need, a field that its check refuses) is left to the generated decoder and the converter, so
 * the answer, or the refusal, is theirs byte for byte; the requests a miner sends take the
 * direct path. Fields are views into `bytes`.
 */
export function applyBlockRequestFromBytes(bytes: Uint8Array, ctx: ShardContext = {}): ApplyBlockRequest {
  const direct = readApplyBlock(plain(bytes));
  if (direct === undefined) return applyBlockRequestFromProto(PbApplyBlockRequest.decode(bytes), ctx);
  // The checks of the converter that span the request, in its order (every per-field check passed).
  const count = everyShard(direct.expectedRoots, ctx.shardCount, 'expectedRoots');
  uniqueShards(direct.shards, count, 'shards');
  checkAccountsOnce(direct.shards);
  return {
    headerRlp: direct.headerRlp,
    shards: direct.shards,
    expectedRoots: direct.expectedRoots.map((x, i) => shardRootFromProto(x, count, `expectedRoots[${i}]`)),
  };
}

/** An account's storage writes when it has none (never written to: the type is readonly). */
const NO_WRITES: readonly StorageWrite[] = Object.freeze([]);

/**
 * A cursor over protobuf bytes for readApplyBlock. Every read returns −1 (or undefined) for what
 * the direct path does not take: a varint longer than `maxBytes`, a length past the end.
 */
class WireCursor {
  pos = 0;
  constructor(
    readonly b: Uint8Array,
    public end: number,
  ) {}

  /** A varint of at most `maxBytes` bytes (≤ 7: exact as a number), or −1. */
  varint(maxBytes: number): number {
    const b = this.b;
    let v = 0;
    let mul = 1;
    for (let i = 0; i < maxBytes; i++) {
      if (this.pos >= this.end) return -1;
      const x = b[this.pos++]!;
      v += (x & 0x7f) * mul;
      if (x < 0x80) return v;
      mul *= 128;
    }
    return -1;
  }

  /** The end of a length-delimited field whose length comes next, or −1. */
  span(): number {
    const n = this.varint(5);
    if (n < 0 || n > this.end - this.pos) return -1;
    return this.pos + n;
  }
}

interface DirectRequest {
  headerRlp: Uint8Array;
  shards: ShardUpdate[];
  expectedRoots: commonPb.ShardRoot[];
}

/** The request read directly, each field's own checks passed; undefined for anything else. */
function readApplyBlock(bytes: Uint8Array): DirectRequest | undefined {
  const c = new WireCursor(bytes, bytes.length);
  let headerRlp: Uint8Array | undefined;
  const shards: ShardUpdate[] = [];
  const expectedRoots: commonPb.ShardRoot[] = [];
  while (c.pos < bytes.length) {
    const tag = c.varint(1);
    if (tag !== 10 && tag !== 18 && tag !== 26) return undefined;
    const end = c.span();
    if (end < 0) return undefined;
    if (tag === 10) {
      if (headerRlp !== undefined || end === c.pos) return undefined;
      headerRlp = bytes.subarray(c.pos, end);
    } else if (tag === 18) {
      c.end = end;
      const s = readShardUpdate(c);
      c.end = bytes.length;
      if (s === undefined) return undefined;
      shards.push(s);
    } else {
      const root = readShardRoot(c, end);
      if (root === undefined) return undefined;
      expectedRoots.push(root);
    }
    c.pos = end;
  }
  if (headerRlp === undefined) return undefined;
  return { headerRlp, shards, expectedRoots };
}

/** A ShardRoot from `c.pos` to `end` (shard, root, each at most once); undefined for anything else. */
function readShardRoot(c: WireCursor, end: number): commonPb.ShardRoot | undefined {
  let shard = -2;
  let root: Uint8Array | undefined;
  while (c.pos < end) {
    const tag = c.varint(1);
    if (tag === 8 && shard === -2) {
      shard = c.varint(4);
      if (shard < 0 || c.pos > end) return undefined;
    } else if (tag === 18 && root === undefined) {
      const e = c.span();
      if (e < 0 || e > end) return undefined;
      root = c.b.subarray(c.pos, e);
      c.pos = e;
    } else return undefined;
  }
  return { shard: shard === -2 ? 0 : shard, root: root ?? NO_BYTES };
}

/** A ShardUpdate up to `c.end`; undefined for anything readApplyBlock leaves to the decoder. */
function readShardUpdate(c: WireCursor): ShardUpdate | undefined {
  let shard = -2;
  const accounts: AccountUpdate[] = [];
  const outer = c.end;
  while (c.pos < outer) {
    const tag = c.varint(1);
    if (tag === 8) {
      if (shard !== -2) return undefined;
      shard = c.varint(4); // below 2^28: the uint32 as it is
      if (shard < 0) return undefined;
    } else if (tag === 18) {
      const end = c.span();
      if (end < 0) return undefined;
      c.end = end;
      const a = readAccountUpdate(c);
      c.end = outer;
      if (a === undefined) return undefined;
      accounts.push(a);
    } else return undefined;
  }
  return { shard: shard === -2 ? 0 : shard, accounts };
}

/** Field numbers seen, one bit each: a field that comes twice is left to the decoder. */
function once(seen: number, field: number): number {
  const bit = 1 << field;
  return seen & bit ? -1 : seen | bit;
}

/**
 * An AccountUpdate up to `c.end`, as accountUpdateFromProto makes it; undefined for anything it
 * (or the decoder) would treat otherwise: a refusal, a repeated scalar, an unknown field.
 */
function readAccountUpdate(c: WireCursor): AccountUpdate | undefined {
  const b = c.b;
  const end = c.end;
  let seen = 0;
  let address: Uint8Array | undefined;
  let deleted = false;
  let nonce = 0;
  let balanceFrom = 0;
  let balanceTo = 0;
  let code: Uint8Array | undefined;
  let clearStorage = false;
  let storage: StorageWrite[] | undefined;
  while (c.pos < end) {
    const tag = c.varint(1);
    const field = tag >>> 3;
    if (field !== 7) {
      seen = once(seen, field);
      if (seen < 0) return undefined;
    }
    switch (tag) {
      case 10: {
        const e = c.span();
        if (e - c.pos !== ADDRESS_LENGTH) return undefined;
        address = b.subarray(c.pos, e);
        c.pos = e;
        break;
      }
      case 16:
      case 48: {
        const v = c.varint(1);
        if (v !== 0 && v !== 1) return undefined;
        if (tag === 16) deleted = v === 1;
        else clearStorage = v === 1;
        break;
      }
      case 24:
        nonce = c.varint(7);
        if (nonce < 0) return undefined;
        break;
      case 34: {
        const e = c.span();
        // Minimal big-endian, at most 32 bytes (minimalBytes).
        if (e < 0 || e - c.pos > 32 || (e > c.pos && b[c.pos] === 0)) return undefined;
        balanceFrom = c.pos;
        balanceTo = e;
        c.pos = e;
        break;
      }
      case 42: {
        const e = c.span();
        if (e < 0) return undefined;
        code = e > c.pos ? b.subarray(c.pos, e) : undefined;
        c.pos = e;
        break;
      }
      case 58: {
        const e = c.span();
        if (e < 0) return undefined;
        const w = readStorageWrite(c, e);
        if (w === undefined) return undefined;
        storage ??= [];
        storage.push(w);
        break;
      }
      default:
        return undefined;
    }
  }
  if (address === undefined) return undefined;
  if (deleted) {
    // Nothing else may be set on a deletion (accountUpdateFromProto's consistency check).
    if (nonce !== 0 || balanceTo > balanceFrom || code !== undefined || clearStorage || storage !== undefined)
      return undefined;
    return { deleted: true, address };
  }
  if (storage !== undefined && !distinctSlots(storage)) return undefined;
  return {
    deleted: false,
    address,
    nonce: BigInt(nonce),
    balance: balanceTo > balanceFrom ? bytesToBigint(b, balanceFrom, balanceTo) : 0n,
    code,
    clearStorage,
    storage: storage ?? NO_WRITES,
  };
}

/** A StorageWrite from `c.pos` to `end` (storageWrites' checks but the slots' uniqueness). */
function readStorageWrite(c: WireCursor, end: number): StorageWrite | undefined {
  const b = c.b;
  let slot: Uint8Array | undefined;
  let value: Uint8Array | undefined;
  const outer = c.end;
  c.end = end;
  while (c.pos < end) {
    const tag = c.varint(1);
    const e = tag === 10 || tag === 18 ? c.span() : -1;
    if (e < 0) return undefined;
    if (tag === 10) {
      if (slot !== undefined || e - c.pos !== SLOT_LENGTH) return undefined;
      slot = b.subarray(c.pos, e);
    } else {
      if (value !== undefined || e - c.pos > 32) return undefined;
      let from = c.pos;
      while (from < e && b[from] === 0) from++; // trimmedBytes: leading zeros dropped
      value = b.subarray(from, e);
    }
    c.pos = e;
  }
  c.end = outer;
  if (slot === undefined) return undefined;
  return { slot, value: value ?? NO_BYTES };
}

/** Whether no slot comes twice (storageWrites refuses that). */
function distinctSlots(ws: readonly StorageWrite[]): boolean {
  if (ws.length < 2) return true;
  const seen = new Set<string>();
  for (const w of ws) {
    const k = byteKey(w.slot);
    if (seen.has(k)) return false;
    seen.add(k);
  }
  return true;
}

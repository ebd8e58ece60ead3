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
import type * as pb from '../generated/monsoon/storage/v1/storage.js';
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

/**
 * A version as bytes, for checkpoints: the block's header and total difficulty, the shard
 * selection, the account trie (own shards in full, the others as their roots), every storage
 * trie and every code. The CheckpointStore around it adds the CRC and the atomic write; the
 * trie encodings check every node against its parent's hash on the way back in.
 *
 *   "MSCK" 01, then sections of [u32 LE length][bytes]:
 *   meta (JSON: shardCount, shards, totalDifficulty), header RLP, account trie,
 *   storage count (u32 LE), then [32-byte account key][storage trie] each,
 *   code count (u32 LE), then [code] each.
 */
import { type DsmTree, decodeTree, encodeTree, encodeTreeChunks, StateTree } from '@monsoon/dsm-tree';
import type { Keccak } from '@monsoon/keccak';
import { decodeHeader, headerHash, ShardLayout } from '@monsoon/protocol';
import { ShardState } from './shardState.js';
import { StorageError, StorageErrorCode } from './storageError.js';
import { type Version, VersionStore } from './versionStore.js';

const MAGIC = Buffer.from('MSCK01', 'latin1');

function u32(n: number): Uint8Array {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n, 0);
  return b;
}

const turn = () => new Promise<void>((r) => setImmediate(r));

function* section(bytes: Uint8Array): Generator<Uint8Array> {
  yield u32(bytes.length);
  yield bytes;
}

/**
 * The checkpoint of `v`, as chunks, giving the event loop a turn about every megabyte of the
 * account trie and between storage tries: requests keep being served while it is encoded.
 * (The account trie's chunks are held until its length is known: about 300 MB at 1M accounts.)
 */
export async function* encodeCheckpoint(v: Version): AsyncGenerator<Uint8Array> {
  const st = v.state;
  const meta = {
    shardCount: st.layout.count,
    shards: st.owned,
    totalDifficulty: v.totalDifficulty.toString(),
  };
  yield MAGIC;
  yield* section(Buffer.from(JSON.stringify(meta), 'utf8'));
  yield* section(v.headerRlp);
  // The account trie is the big one: its length prefix first, then its chunks with a turn of
  // the event loop between them, so requests keep being served while it is written.
  const accounts = encodeTreeChunks(st.state.accounts);
  const chunks: Uint8Array[] = [];
  for (const c of accounts) {
    chunks.push(c);
    await turn();
  }
  yield u32(chunks.reduce((n, c) => n + c.length, 0));
  yield* chunks;
  const parts = st.state.exportParts();
  yield u32(parts.storage.length);
  for (const [key, tree] of parts.storage) {
    yield key;
    yield* section(encodeTree(tree));
    await turn();
  }
  yield u32(parts.code.length);
  for (const c of parts.code) yield* section(c);
}

function corrupt(message: string): never {
  throw new StorageError(StorageErrorCode.CheckpointCorrupt, `checkpoint: ${message}`);
}

/** Decodes a checkpoint into a version (checked: the account trie's root is the header's). */
export function decodeCheckpoint(bytes: Uint8Array, keccak?: Keccak): Version {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let pos = 0;
  const take = (n: number): Uint8Array => {
    if (pos + n > b.length) corrupt(`truncated at byte ${pos} (needs ${n} more)`);
    const s = bytes.subarray(pos, pos + n);
    pos += n;
    return s;
  };
  const count = () => Buffer.from(take(4)).readUInt32LE(0);
  const sectionBytes = () => take(count());
  if (Buffer.compare(Buffer.from(take(MAGIC.length)), MAGIC) !== 0)
    corrupt('not a storage checkpoint (bad magic)');
  let meta: { shardCount: 16 | 256; shards: number[]; totalDifficulty: string };
  try {
    meta = JSON.parse(Buffer.from(sectionBytes()).toString('utf8'));
  } catch {
    return corrupt('unreadable meta section');
  }
  const headerRlp = sectionBytes();
  const opts = keccak ? { hash: keccak } : {};
  const accounts = decodeTree(sectionBytes(), opts);
  const storage: [Uint8Array, DsmTree][] = [];
  for (let n = count(), i = 0; i < n; i++) {
    const key = take(32);
    storage.push([key, decodeTree(sectionBytes(), opts)]);
  }
  const code: Uint8Array[] = [];
  for (let n = count(), i = 0; i < n; i++) code.push(sectionBytes());
  if (pos !== bytes.length) corrupt(`${bytes.length - pos} trailing bytes`);
  const header = decodeHeader(headerRlp);
  const state = StateTree.restore(accounts, { storage, code }, opts);
  if (Buffer.compare(Buffer.from(state.root()), Buffer.from(header.stateRoot)) !== 0) {
    corrupt('the account trie does not have the header’s state root');
  }
  const hash = headerHash(header, keccak);
  return {
    hash,
    id: VersionStore.idOf(hash),
    header,
    headerRlp,
    totalDifficulty: BigInt(meta.totalDifficulty),
    state: ShardState.restore(new ShardLayout(meta.shardCount), meta.shards, state),
  };
}

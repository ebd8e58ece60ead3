/**
 * @ethereumjs/mpt's node store over classic-level: the conventional node's disk path (geth and
 * ethereumjs keep trie nodes hash → RLP in LevelDB). Keys arrive as unprefixed hex strings of node
 * hashes and are stored as their 32 bytes; values are node encodings (the trie must be created with
 * `valueEncoding: ValueEncoding.Bytes`). Used by {@link ReferenceChain}'s disk mode and the benchmarks.
 */
import type { BatchDBOp, DB } from '@ethereumjs/util';
import { ClassicLevel } from 'classic-level';

type Level = ClassicLevel<Buffer, Buffer>;

export class LevelTrieDb implements DB<string, Uint8Array> {
  private constructor(readonly level: Level) {}

  /** Opens (creating if absent) a LevelDB at `dir`; `cacheBytes` is LevelDB's block cache (its default: 8 MiB). */
  static async open(dir: string, cacheBytes?: number): Promise<LevelTrieDb> {
    const level: Level = new ClassicLevel<Buffer, Buffer>(dir, {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
      ...(cacheBytes === undefined ? {} : { cacheSize: cacheBytes }),
    });
    await level.open();
    return new LevelTrieDb(level);
  }

  /** Over an open classic-level that someone else owns (and closes). */
  static over(level: Level): LevelTrieDb {
    return new LevelTrieDb(level);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return (await this.level.get(Buffer.from(key, 'hex'))) ?? undefined;
  }

  async put(key: string, val: Uint8Array): Promise<void> {
    await this.level.put(Buffer.from(key, 'hex'), bytesOf(val));
  }

  async del(key: string): Promise<void> {
    await this.level.del(Buffer.from(key, 'hex'));
  }

  async batch(ops: BatchDBOp<string, Uint8Array>[]): Promise<void> {
    await this.level.batch(
      ops.map((o) =>
        o.type === 'put'
          ? { type: 'put' as const, key: Buffer.from(o.key, 'hex'), value: bytesOf(o.value) }
          : { type: 'del' as const, key: Buffer.from(o.key, 'hex') },
      ),
    );
  }

  shallowCopy(): LevelTrieDb {
    return this;
  }

  async open(): Promise<void> {}

  async close(): Promise<void> {
    await this.level.close();
  }
}

function bytesOf(v: Uint8Array): Buffer {
  if (!(v instanceof Uint8Array))
    throw new TypeError('LevelTrieDb stores bytes: create the trie with valueEncoding Bytes');
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

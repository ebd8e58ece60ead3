/**
 * Where a tiered storage node keeps its cold trie nodes: a LevelDB of node hash → RLP encoding,
 * either opened in this process (`classic-level`) or served by a LevelDB role process over a
 * socket (`many-level`'s host and guest: the Level ecosystem's own protocol, not ours).
 *
 * A remote store fails fast when its socket is down (StorageError UNAVAILABLE naming the
 * address, never a silent wait or an empty answer) and reconnects in the background, so the
 * node serves again as soon as the LevelDB process is back.
 */
import { connect, type Socket } from 'node:net';
import { pipeline } from 'node:stream';
import { parseHostPort } from '@monsoon/edge';
import { ClassicLevel } from 'classic-level';
import { ManyLevelGuest } from 'many-level';
import { StorageError, StorageErrorCode } from '../storageError.js';

/** The operations a node store needs from a LevelDB; keys and values are Buffers. */
export interface NodeDb {
  /** Where it is: a directory, or `host:port` of a LevelDB role. */
  readonly where: string;
  /** One round trip: the values of `keys`, undefined where absent. */
  getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]>;
  /**
   * One value read on the calling thread, undefined where absent: only a LevelDB in this
   * process has it (see TieredStoreOptions.syncReads).
   */
  getSync?(key: Buffer): Buffer | undefined;
  /** One atomic batch of puts and deletes. */
  write(puts: readonly (readonly [Buffer, Buffer])[], dels?: readonly Buffer[]): Promise<void>;
  /** Every key, in order (for a sweep), in pages of at most `page`. */
  keys(page: number): AsyncIterable<Buffer[]>;
  /**
   * Compacts the whole key range now (after a bulk load: a genesis), so reads do not meet
   * LevelDB's level-0 files and a compaction competing with them. Absent on a remote store.
   */
  compact?(): Promise<void>;
  close(): Promise<void>;
}

/** The part of abstract-level's API used here (classic-level and many-level's guest both have it). */
interface BufferLevel {
  getMany(keys: Buffer[]): Promise<(Buffer | undefined)[]>;
  batch(ops: ({ type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer })[]): Promise<void>;
  keys(): { nextv(n: number): Promise<Buffer[]>; close(): Promise<void> };
  compactRange?(start: Buffer, end: Buffer): Promise<void>;
  close(): Promise<void>;
}

const ENCODING = { keyEncoding: 'buffer', valueEncoding: 'buffer' } as const;

/** A NodeDb over any abstract-level database opened with buffer encodings. */
class LevelDb implements NodeDb {
  constructor(
    readonly where: string,
    protected readonly db: BufferLevel,
  ) {}

  getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    return this.db.getMany(keys as Buffer[]);
  }

  async write(puts: readonly (readonly [Buffer, Buffer])[], dels: readonly Buffer[] = []): Promise<void> {
    if (puts.length === 0 && dels.length === 0) return;
    const ops: ({ type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer })[] = [];
    for (const [key, value] of puts) ops.push({ type: 'put', key, value });
    for (const key of dels) ops.push({ type: 'del', key });
    await this.db.batch(ops);
  }

  async *keys(page: number): AsyncIterable<Buffer[]> {
    const it = this.db.keys();
    try {
      for (;;) {
        const keys = await it.nextv(page);
        if (keys.length === 0) return;
        yield keys;
      }
    } finally {
      await it.close();
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** How a LevelDB in this process is opened. */
export interface LocalNodeDbOptions {
  /**
   * LevelDB's block cache (uncompressed blocks recently read), bytes: memory of this process
   * beside the tiered store's, so a tiered node counts it inside its budget (see
   * TieredStoreOptions.leveldbCacheBytes and leveldbCacheFor).
   */
  cacheBytes: number;
  /**
   * Tables LevelDB keeps open (classic-level's default: 1,000), each holding its index and bloom
   * filter in this process' memory (LevelDB's threads' malloc arenas): see bench/tiered.ts.
   */
  maxOpenFiles?: number;
}

/** classic-level's default block cache. */
export const DEFAULT_LEVELDB_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * The block cache a tiered node with `budget` bytes gives its in-process LevelDB: 2% of the
 * budget, between 256 KiB and classic-level's default 8 MiB. Small, because the store's own
 * cache keeps decoded, verified nodes and a block of the table holds ~8 unrelated ones.
 */
export function leveldbCacheFor(budget: number): number {
  return Math.round(Math.min(DEFAULT_LEVELDB_CACHE_BYTES, Math.max(256 * 1024, budget * 0.02)));
}

/** A LevelDB opened in this process (`classic-level`): for one box, tests and benchmarks. */
export async function openLocalNodeDb(
  dir: string,
  opts: Partial<LocalNodeDbOptions> = {},
): Promise<NodeDb & { compact(): Promise<void>; getSync(key: Buffer): Buffer | undefined }> {
  const db = new ClassicLevel<Buffer, Buffer>(dir, {
    ...ENCODING,
    cacheSize: opts.cacheBytes ?? DEFAULT_LEVELDB_CACHE_BYTES,
    ...(opts.maxOpenFiles !== undefined ? { maxOpenFiles: opts.maxOpenFiles } : {}),
  });
  await db.open();
  const level = db as unknown as BufferLevel;
  const store = new LevelDb(dir, level);
  // Node hashes are 32 bytes: this range holds every key.
  return Object.assign(store, {
    compact: () => level.compactRange!(Buffer.alloc(0), Buffer.alloc(33, 0xff)),
    getSync: (key: Buffer) => db.getSync(key),
  });
}

/** How a remote store behaves when its LevelDB process goes away. */
export interface RemoteNodeDbOptions {
  /** An operation not answered within this is UNAVAILABLE (the process hangs, the link is cut). */
  timeoutMs: number;
  /** First reconnect delay; doubles up to `maxRetryMs`. */
  retryMs: number;
  maxRetryMs: number;
  /** How long `connectRemoteNodeDb` waits for the first connection. */
  connectTimeoutMs: number;
}

export const defaultRemoteNodeDbOptions: RemoteNodeDbOptions = {
  timeoutMs: 5_000,
  retryMs: 100,
  maxRetryMs: 2_000,
  connectTimeoutMs: 10_000,
};

/**
 * A LevelDB role's database, through a many-level guest. Operations while the socket is down
 * are refused at once (the guest would queue them until a reconnect), and an operation the
 * connection loss aborts is refused too: both as UNAVAILABLE naming the address.
 */
class RemoteLevelDb extends LevelDb {
  private socket: Socket | undefined;
  private connected = false;
  private closed = false;
  private retryMs: number;
  private timer: NodeJS.Timeout | undefined;
  private lastError = 'not connected yet';
  private readonly waiters: (() => void)[] = [];

  constructor(
    where: string,
    private readonly opts: RemoteNodeDbOptions,
  ) {
    super(where, new ManyLevelGuest<Buffer, Buffer>({ ...ENCODING, retry: false }) as unknown as BufferLevel);
    this.retryMs = opts.retryMs;
  }

  /** Whether the socket to the LevelDB process is up. */
  get isConnected(): boolean {
    return this.connected;
  }

  dial(): void {
    if (this.closed) return;
    const { host, port } = parseHostPort(this.where, 'leveldb');
    const socket = connect({ host, port });
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      this.connected = true;
      this.retryMs = this.opts.retryMs;
      for (const w of this.waiters.splice(0)) w();
    });
    const guest = this.db as unknown as ManyLevelGuest<Buffer, Buffer>;
    pipeline(socket, guest.createRpcStream() as unknown as NodeJS.ReadWriteStream, socket, (err) => {
      this.connected = false;
      this.lastError = err?.message ?? 'connection closed';
      if (this.socket === socket) this.socket = undefined;
      if (this.closed) return;
      this.timer = setTimeout(() => this.dial(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, this.opts.maxRetryMs);
    });
  }

  waitConnected(ms: number): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), ms);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve(true);
      });
    });
  }

  private unavailable(what: string, cause?: unknown): StorageError {
    const why = cause instanceof Error ? cause.message : this.lastError;
    return new StorageError(
      StorageErrorCode.Unavailable,
      `LevelDB at ${this.where} is unreachable (${why}); ${what} cannot be served until it is back`,
      { leveldb: this.where },
    );
  }

  private guarded<T>(what: string, run: () => Promise<T>): Promise<T> {
    if (!this.connected) return Promise.reject(this.unavailable(what));
    return new Promise<T>((resolve, reject) => {
      const t = setTimeout(
        () => reject(this.unavailable(what, new Error(`no answer within ${this.opts.timeoutMs} ms`))),
        this.opts.timeoutMs,
      );
      run().then(
        (v) => {
          clearTimeout(t);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(t);
          reject(this.unavailable(what, e));
        },
      );
    });
  }

  override getMany(keys: readonly Buffer[]): Promise<(Buffer | undefined)[]> {
    return this.guarded('a read of cold trie nodes', () => super.getMany(keys));
  }

  override write(puts: readonly (readonly [Buffer, Buffer])[], dels: readonly Buffer[] = []): Promise<void> {
    return this.guarded('a write of trie nodes', () => super.write(puts, dels));
  }

  override async *keys(page: number): AsyncIterable<Buffer[]> {
    if (!this.connected) throw this.unavailable('a sweep');
    yield* super.keys(page);
  }

  override async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await super.close().catch(() => undefined);
    this.socket?.destroy();
  }
}

/**
 * Connects to a LevelDB role at `hostPort`; resolves once connected (else UNAVAILABLE after
 * `connectTimeoutMs`). Later losses of the connection are retried in the background.
 */
export async function connectRemoteNodeDb(
  hostPort: string,
  opts: Partial<RemoteNodeDbOptions> = {},
): Promise<NodeDb & { readonly isConnected: boolean }> {
  const o = { ...defaultRemoteNodeDbOptions, ...opts };
  const db = new RemoteLevelDb(hostPort, o);
  db.dial();
  if (!(await db.waitConnected(o.connectTimeoutMs))) {
    await db.close();
    throw new StorageError(
      StorageErrorCode.Unavailable,
      `LevelDB at ${hostPort}: no connection within ${o.connectTimeoutMs} ms (is \`monsoon node leveldb\` running there?)`,
      { leveldb: hostPort },
    );
  }
  return db;
}

/**
 * `monsoon node leveldb` (`npm run leveldb -- --listen 127.0.0.1:7000 --dir data/leveldb`): the
 * process that holds a tiered storage node's cold trie nodes. A `classic-level` database served
 * over TCP by `many-level`'s host, one RPC stream per connected storage node: the Level
 * ecosystem's own protocol. Flags, environment, `--config`, the `listening` line, exit codes
 * and signals are the shared role scaffold's.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { pipeline } from 'node:stream';
import {
  EdgeErrorCode,
  formatHostPort,
  isEdgeError,
  parseHostPort,
  type RawOptions,
  type RoleContext,
  type RoleOption,
  type RoleSpec,
  type RunningRole,
  read,
  runRole,
} from '@monsoon/edge';
import { ClassicLevel } from 'classic-level';
import { ManyLevelHost } from 'many-level';
import { isStorageError, StorageErrorCode } from '../storageError.js';

/** What the LevelDB role runs with. */
export interface LeveldbRoleConfig {
  /** `host:port` to serve on; port 0 = any free port. */
  readonly listen: string;
  /** The database's directory (created when missing). */
  readonly dir: string;
}

export const LEVELDB_OPTIONS: readonly RoleOption[] = [
  {
    name: 'listen',
    arg: '<host:port>',
    description: 'TCP address storage nodes connect to, port 0 = any free port (default: 127.0.0.1:7000)',
  },
  { name: 'dir', arg: '<dir>', description: 'the LevelDB directory (default: ./data/leveldb)', path: true },
];

type Callback<T = void> = (err: Error | null, value?: T) => void;
interface PromiseIterator {
  nextv(n: number): Promise<unknown[]>;
  seek(target: unknown, opts?: object): void;
  close(): Promise<void>;
}
/** classic-level 3's promise API, as far as the host uses it. */
interface PromiseLevel {
  supports: object;
  open(opts: object): Promise<void>;
  get(key: Buffer, opts: object): Promise<Buffer | undefined>;
  getMany(keys: Buffer[], opts: object): Promise<(Buffer | undefined)[]>;
  put(key: Buffer, value: Buffer, opts: object): Promise<void>;
  del(key: Buffer, opts: object): Promise<void>;
  batch(ops: object[], opts: object): Promise<void>;
  clear(opts: object): Promise<void>;
  iterator(opts: object): PromiseIterator;
  keys(opts: object): PromiseIterator;
  values(opts: object): PromiseIterator;
}

/**
 * many-level 2's host drives its database with callbacks (the abstract-level 1 API), which
 * classic-level 3 no longer takes: this facade calls classic-level's promises and answers the
 * host's callbacks. A missing key is reported as abstract-level 1 did (LEVEL_NOT_FOUND).
 */
export function callbackFacade(level: ClassicLevel<Buffer, Buffer>): object {
  const db = level as unknown as PromiseLevel;
  const answer = <T>(p: Promise<T>, cb: Callback<T>): void => {
    p.then(
      (v) => cb(null, v),
      (e: Error) => cb(e),
    );
  };
  const iterate = (kind: 'iterator' | 'keys' | 'values') => (opts: object) => {
    const it = db[kind](opts);
    return {
      nextv: (n: number, cb: Callback<unknown[]>) => answer(it.nextv(n), cb),
      seek: (target: unknown, o?: object) => it.seek(target, o),
      close: (cb?: Callback) => answer(it.close(), cb ?? (() => undefined)),
    };
  };
  return {
    supports: db.supports,
    open: (opts: object, cb: Callback) => answer(db.open(opts), cb),
    get: (key: Buffer, opts: object, cb: Callback<Buffer>) =>
      db.get(key, opts).then(
        (v) =>
          v === undefined
            ? cb(
                Object.assign(new Error(`key ${key.toString('hex')} not found`), { code: 'LEVEL_NOT_FOUND' }),
              )
            : cb(null, v),
        (e: Error) => cb(e),
      ),
    getMany: (keys: Buffer[], opts: object, cb: Callback<(Buffer | undefined)[]>) =>
      answer(db.getMany(keys, opts), cb),
    put: (key: Buffer, value: Buffer, opts: object, cb: Callback) => answer(db.put(key, value, opts), cb),
    del: (key: Buffer, opts: object, cb: Callback) => answer(db.del(key, opts), cb),
    batch: (ops: object[], opts: object, cb: Callback) => answer(db.batch(ops, opts), cb),
    clear: (opts: object, cb: Callback) => answer(db.clear(opts), cb),
    iterator: iterate('iterator'),
    keys: iterate('keys'),
    values: iterate('values'),
  };
}

async function startLeveldb(cfg: LeveldbRoleConfig, { logger: log }: RoleContext): Promise<RunningRole> {
  const db = new ClassicLevel<Buffer, Buffer>(cfg.dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  const host = new ManyLevelHost(callbackFacade(db) as never);
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    log.info('guest connected', { from: `${socket.remoteAddress}:${socket.remotePort}` });
    pipeline(socket, host.createRpcStream() as unknown as NodeJS.ReadWriteStream, socket, (err) => {
      sockets.delete(socket);
      log.info('guest gone', { error: err?.message });
    });
  });
  const { host: h, port } = parseHostPort(cfg.listen, 'listen');
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, h, () => ok());
    });
  } catch (e) {
    await db.close();
    throw e;
  }
  const bound = server.address();
  const address =
    bound !== null && typeof bound === 'object' ? formatHostPort({ host: h, port: bound.port }) : cfg.listen;
  return {
    listening: { address, dir: resolve(cfg.dir) },
    status: () => ({ guests: sockets.size }),
    async close() {
      const closed = new Promise<void>((ok) => server.close(() => ok()));
      for (const s of sockets) s.destroy();
      await closed;
      await db.close();
    },
  };
}

/** The LevelDB role as the shared scaffold runs it. */
export const leveldbRole: RoleSpec<LeveldbRoleConfig> = {
  role: 'leveldb',
  description: "Serve a LevelDB (classic-level, over many-level) for tiered storage nodes' cold trie nodes.",
  options: LEVELDB_OPTIONS,
  load(raw: RawOptions) {
    return {
      listen: read.hostPort(raw.listen ?? '127.0.0.1:7000', 'listen'),
      dir: read.str(raw.dir ?? './data/leveldb', 'dir'),
    };
  },
  start: startLeveldb,
  isUsageError: (e) =>
    isStorageError(e, StorageErrorCode.BadArgument) || isEdgeError(e, EdgeErrorCode.BadArgument),
};

/** Runs the LevelDB role until SIGTERM/SIGINT. `argv` excludes `node`, the script and the role. */
export function runLeveldb(argv: readonly string[]): Promise<void> {
  return runRole(leveldbRole, argv);
}

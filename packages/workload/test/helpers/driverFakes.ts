/**
 * In-process stand-ins for a Monsoon cluster, on real sockets (127.0.0.1:0), for the load
 * driver's tests:
 * - {@link FakeClientCore}: what the clients and the miner decide, shared by every fake client:
 *   recovers each transaction's sender, checks nonces as a miner's pending state would, accepts
 *   or refuses by policy, and records every breach of the driver's promises (a sender's second
 *   transaction arriving before the first was answered, a nonce out of order);
 * - {@link FakeClientServer}: ClientService.SendTransactions over gRPC;
 * - {@link FakeJsonRpcServer}: eth_sendRawTransaction batches over HTTP, plus /metrics;
 * - {@link FakeMinerServer}: MinerService.SubscribeBlocks, streaming a block every few ms with
 *   the accepted transactions whose inclusion delay has passed.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { decodeTransaction, makeCommon, recoverSenders } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  blockWithReceiptsToProto,
  ClientServiceDefinition,
  type ClientServiceServer,
  type clientPb,
  encodeHeader,
  MinerServiceDefinition,
  type MinerServiceServer,
  type minerPb,
  type RefusedBy,
  sendResultsToProto,
  sendTransactionsRequestFromProto,
} from '@monsoon/protocol';
import type { KeySource } from '@monsoon/workload';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** One transaction as the fake cluster saw it. */
export interface Arrival {
  /** Order of arrival over all fake clients, from 0. */
  readonly index: number;
  readonly sender: number;
  readonly nonce: bigint;
  readonly raw: Uint8Array;
  readonly hash: Uint8Array;
}

export type FakeOutcome =
  | { readonly status: 'accepted' }
  | { readonly status: 'refused'; readonly by: RefusedBy; readonly error: string };

export interface FakePolicy {
  /** Refuse this arrival (before the nonce check, as a client would), or undefined to go on. */
  refuse?(a: Arrival): { by: RefusedBy; error: string } | undefined;
  /** Fail the whole call with UNAVAILABLE (calls counted from 0 over all fake clients). */
  failCall?(call: number): boolean;
  /** Delay before a call is answered, ms. */
  answerDelayMs?: number;
}

/** The shared decision-maker of the fake clients, and the witness of what the driver did. */
export class FakeClientCore {
  readonly policy: FakePolicy;
  private readonly common = makeCommon(1337n);
  private readonly index = new Map<string, number>();
  /** Next nonce per sender, as a miner's pending state has it. */
  private readonly pending = new Map<number, bigint>();
  /** Senders with a transaction not yet answered. */
  private readonly unanswered = new Set<number>();
  private calls = 0;
  arrivals = 0;
  /** A transaction arrived while its sender had one unanswered (the driver broke nonce order). */
  orderViolations = 0;
  /** A transaction whose nonce was not the sender's next (refused as a miner would). */
  nonceErrors = 0;
  refusedByPolicy: Record<RefusedBy, number> = { client: 0, miner: 0, stale: 0 };
  /** Transactions in calls failed by policy. */
  failedTxs = 0;
  accepted: Arrival[] = [];
  /** Arrived minus (included or refused): what the driver had in flight, at its largest. */
  maxInFlight = 0;
  private inFlight = 0;
  /** Called with each accepted transaction (the miner includes it). */
  onAccepted: (a: Arrival) => void = () => {};

  constructor(accounts: KeySource, policy: FakePolicy = {}) {
    this.policy = policy;
    for (let i = 0; i < accounts.count; i++) this.index.set(hex(accounts.address(i)), i);
  }

  /** The miner included (or lost for good) a transaction: it is no longer in flight. */
  finished(): void {
    this.inFlight--;
  }

  /** One call: resolves with an outcome per transaction, or rejects (whole call failed). */
  async handle(raws: readonly Uint8Array[]): Promise<FakeOutcome[]> {
    const call = this.calls++;
    if (this.policy.failCall?.(call)) {
      this.failedTxs += raws.length;
      throw new Error(`call ${call} failed by policy`);
    }
    const arrivals = raws.map((raw) => this.arrive(raw));
    const outcomes = arrivals.map((a) => this.decide(a));
    if (this.policy.answerDelayMs) await new Promise((r) => setTimeout(r, this.policy.answerDelayMs));
    for (const a of arrivals) this.unanswered.delete(a.sender);
    return outcomes;
  }

  private arrive(raw: Uint8Array): Arrival {
    const tx = decodeTransaction(raw, this.common);
    const from = recoverSenders([tx])[0];
    if (!(from instanceof Uint8Array)) throw new Error(`sender recovery failed: ${from?.message}`);
    const sender = this.index.get(hex(from));
    if (sender === undefined) throw new Error(`unknown sender ${hex(from)}`);
    if (this.unanswered.has(sender)) this.orderViolations++;
    this.unanswered.add(sender);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return { index: this.arrivals++, sender, nonce: tx.nonce, raw, hash: keccak.keccak256(raw) };
  }

  private decide(a: Arrival): FakeOutcome {
    const refusal = this.policy.refuse?.(a);
    if (refusal !== undefined) {
      this.refusedByPolicy[refusal.by]++;
      this.inFlight--;
      return { status: 'refused', ...refusal };
    }
    const next = this.pending.get(a.sender) ?? 0n;
    if (a.nonce !== next) {
      this.nonceErrors++;
      this.inFlight--;
      return {
        status: 'refused',
        by: 'miner',
        error: `nonce too ${a.nonce < next ? 'low' : 'high'}: next nonce ${next}, tx nonce ${a.nonce}`,
      };
    }
    this.pending.set(a.sender, next + 1n);
    this.accepted.push(a);
    this.onAccepted(a);
    return { status: 'accepted' };
  }

  /** Nonces of the accepted transactions, per sender, in order of acceptance. */
  acceptedNonces(): Map<number, bigint[]> {
    const out = new Map<number, bigint[]>();
    for (const a of this.accepted) {
      const list = out.get(a.sender) ?? [];
      list.push(a.nonce);
      out.set(a.sender, list);
    }
    return out;
  }
}

function bind(server: Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
}

function shutdown(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.tryShutdown(() => resolve());
    setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, 500).unref();
  });
}

/** A fake client's gRPC ClientService. */
export class FakeClientServer {
  /** Calls and transactions this client received. */
  calls = 0;
  txs = 0;
  /** Transactions it answered refused. */
  refused = 0;
  /** Each transaction received, in order, with the signer's public key sent beside it (hex; '' without). */
  readonly received: { readonly raw: Uint8Array; readonly senderKey: string }[] = [];

  private constructor(
    private readonly server: Server,
    readonly address: string,
  ) {}

  static async start(core: FakeClientCore): Promise<FakeClientServer> {
    const server = new Server();
    let self: FakeClientServer | undefined;
    const handlers: ClientServiceServer = {
      sendTransactions(
        call: ServerUnaryCall<clientPb.SendTransactionsRequest, clientPb.SendTransactionsResponse>,
        cb: sendUnaryData<clientPb.SendTransactionsResponse>,
      ) {
        const { transactions: raws, senderKeys } = sendTransactionsRequestFromProto(call.request);
        for (let i = 0; i < raws.length; i++) {
          const key = senderKeys?.subarray(64 * i, 64 * i + 64);
          self!.received.push({
            raw: raws[i]!,
            senderKey: key === undefined ? '' : Buffer.from(key).toString('hex'),
          });
        }
        self!.calls++;
        self!.txs += raws.length;
        core.handle(raws).then(
          (outcomes) => {
            self!.refused += outcomes.filter((o) => o.status === 'refused').length;
            cb(
              null,
              sendResultsToProto(
                outcomes.map((o, i) => {
                  const txHash = keccak.keccak256(raws[i]!);
                  return o.status === 'accepted'
                    ? { txHash, accepted: true as const }
                    : { txHash, accepted: false as const, error: o.error, refusedBy: o.by };
                }),
              ),
            );
          },
          (e: Error) => cb({ code: status.UNAVAILABLE, details: e.message }),
        );
      },
    };
    server.addService(ClientServiceDefinition, handlers);
    const port = await bind(server);
    self = new FakeClientServer(server, `127.0.0.1:${port}`);
    return self;
  }

  close(): Promise<void> {
    return shutdown(this.server);
  }
}

/** Witness counters a fake client's /metrics reports, per accepted transaction. */
export const FAKE_WITNESS_BYTES = { bag: 100, unbagged: 300, proofs: 50, storageCalls: 2, submissions: 0.5 };

/**
 * A fake client's JSON-RPC endpoint (POST /, batches of eth_sendRawTransaction) and its
 * /metrics (GET), whose witness counters grow by {@link FAKE_WITNESS_BYTES} per transaction
 * the core accepted.
 */
export class FakeJsonRpcServer {
  calls = 0;
  txs = 0;
  /** Transactions it answered refused. */
  refused = 0;

  private constructor(
    private readonly server: HttpServer,
    readonly url: string,
  ) {}

  static async start(core: FakeClientCore): Promise<FakeJsonRpcServer> {
    let self: FakeJsonRpcServer | undefined;
    const server = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/metrics') {
        const n = core.accepted.length;
        res.setHeader('content-type', 'text/plain; version=0.0.4');
        res.end(
          [
            '# HELP monsoon_client_bag_bytes_total Bytes of bag nodes sent to miners.',
            '# TYPE monsoon_client_bag_bytes_total counter',
            `monsoon_client_bag_bytes_total ${FAKE_WITNESS_BYTES.bag * n}`,
            `monsoon_client_witness_bytes_unbagged_total ${FAKE_WITNESS_BYTES.unbagged * n}`,
            `monsoon_client_proof_bytes_fetched_total{shard="0"} ${(FAKE_WITNESS_BYTES.proofs * n) / 2}`,
            `monsoon_client_proof_bytes_fetched_total{shard="1"} ${(FAKE_WITNESS_BYTES.proofs * n) / 2}`,
            `monsoon_client_storage_calls_total ${FAKE_WITNESS_BYTES.storageCalls * n}`,
            `monsoon_client_submissions_total ${FAKE_WITNESS_BYTES.submissions * n}`,
            '',
          ].join('\n'),
        );
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const batch = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; params: [string] }[];
        self!.calls++;
        self!.txs += batch.length;
        const raws = batch.map((r) => new Uint8Array(Buffer.from(r.params[0].slice(2), 'hex')));
        core.handle(raws).then(
          (outcomes) => {
            self!.refused += outcomes.filter((o) => o.status === 'refused').length;
            res.setHeader('content-type', 'application/json');
            res.end(
              JSON.stringify(
                // Answered in reverse: the driver must match answers by id.
                outcomes
                  .map((o, i) =>
                    o.status === 'accepted'
                      ? { jsonrpc: '2.0', id: batch[i]!.id, result: `0x${hex(keccak.keccak256(raws[i]!))}` }
                      : { jsonrpc: '2.0', id: batch[i]!.id, error: { code: -32000, message: o.error } },
                  )
                  .reverse(),
              ),
            );
          },
          (e: Error) => {
            res.statusCode = 503;
            res.end(e.message);
          },
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    self = new FakeJsonRpcServer(server, `http://127.0.0.1:${port}/`);
    return self;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

export interface FakeMinerPolicy {
  /** How long after acceptance an arrival is included, ms (default 0: the next block). */
  includeDelayMs?(a: Arrival): number;
  /** Never include this arrival. */
  drop?(a: Arrival): boolean;
  /** Include it, then replace that block by one without it (a reorg), and never include it again. */
  reorgOut?(a: Arrival): boolean;
  /** Block interval, ms (default 5). */
  blockIntervalMs?: number;
}

interface FakeBlock {
  readonly number: bigint;
  readonly hash: Uint8Array;
  readonly message: minerPb.BlockWithReceipts;
}

const ZERO32 = new Uint8Array(32);
const RECEIPT = new Uint8Array([0x02, 0xc0]);

/** A miner that streams canonical blocks of the core's accepted transactions. */
export class FakeMinerServer {
  /** Arrivals never included (dropped or reorged out). */
  lost = 0;
  reorgs = 0;
  private readonly waiting: { a: Arrival; due: number }[] = [];
  private readonly chain: FakeBlock[] = [];
  private readonly streams = new Set<
    ServerWritableStream<minerPb.SubscribeBlocksRequest, minerPb.BlockWithReceipts>
  >();
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly server: Server,
    readonly address: string,
    private readonly core: FakeClientCore,
    private readonly policy: FakeMinerPolicy,
  ) {
    this.chain.push(this.block(0n, ZERO32, [], 0));
    core.onAccepted = (a) => {
      if (policy.drop?.(a)) {
        this.lost++;
        core.finished();
        return;
      }
      this.waiting.push({ a, due: performance.now() + (policy.includeDelayMs?.(a) ?? 0) });
    };
    this.timer = setInterval(() => this.seal(), policy.blockIntervalMs ?? 5);
  }

  static async start(core: FakeClientCore, policy: FakeMinerPolicy = {}): Promise<FakeMinerServer> {
    const server = new Server();
    let self: FakeMinerServer | undefined;
    const unimplemented = (_call: unknown, cb?: sendUnaryData<never>) =>
      cb?.({ code: status.UNIMPLEMENTED, details: 'fake miner' });
    const handlers: MinerServiceServer = {
      submit: unimplemented,
      peer: (call) => call.end(),
      subscribeHeads: (call) => call.end(),
      subscribeBlocks: (call) => self!.subscribe(call),
      getHeaders: (call) => call.end(),
    };
    server.addService(MinerServiceDefinition, handlers);
    const port = await bind(server);
    self = new FakeMinerServer(server, `127.0.0.1:${port}`, core, policy);
    return self;
  }

  /** Blocks on the canonical chain after the genesis block. */
  get height(): number {
    return this.chain.length - 1;
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    for (const s of this.streams) s.end();
    return shutdown(this.server);
  }

  private subscribe(
    call: ServerWritableStream<minerPb.SubscribeBlocksRequest, minerPb.BlockWithReceipts>,
  ): void {
    const from = call.request.fromNumber;
    const head = this.chain[this.chain.length - 1]!;
    for (const b of from === undefined ? [head] : this.chain.filter((x) => x.number >= from))
      call.write(b.message);
    this.streams.add(call);
    const drop = () => this.streams.delete(call);
    call.on('cancelled', drop);
    call.on('error', drop);
  }

  private block(number: bigint, parentHash: Uint8Array, txs: readonly Arrival[], variant: number): FakeBlock {
    const headerRlp = encodeHeader({
      parentHash,
      miner: new Uint8Array(20),
      stateRoot: ZERO32,
      transactionsRoot: ZERO32,
      receiptsRoot: ZERO32,
      difficulty: 0n,
      number,
      gasLimit: 30_000_000n,
      gasUsed: 21_000n * BigInt(txs.length),
      timestamp: BigInt(Math.floor(Date.now() / 1000)),
      extraData: new Uint8Array([variant]),
      nonce: new Uint8Array(8),
    });
    return {
      number,
      hash: keccak.keccak256(headerRlp),
      message: blockWithReceiptsToProto({
        headerRlp,
        transactions: txs.map((a) => a.raw),
        receipts: txs.map(() => RECEIPT),
      }),
    };
  }

  private publish(b: FakeBlock): void {
    for (const s of this.streams) s.write(b.message);
  }

  private seal(): void {
    const now = performance.now();
    const due: Arrival[] = [];
    for (let i = 0; i < this.waiting.length; ) {
      if (this.waiting[i]!.due <= now) due.push(this.waiting.splice(i, 1)[0]!.a);
      else i++;
    }
    if (due.length === 0) return;
    const parent = this.chain[this.chain.length - 1]!;
    const number = parent.number + 1n;
    const out = due.filter((a) => this.policy.reorgOut?.(a));
    if (out.length > 0) {
      // First a block with them, then its replacement at the same height without them.
      this.publish(this.block(number, parent.hash, due, 1));
      this.reorgs++;
      this.lost += out.length;
      for (let i = 0; i < out.length; i++) this.core.finished();
    }
    const kept = due.filter((a) => !this.policy.reorgOut?.(a));
    const b = this.block(number, parent.hash, kept, 0);
    this.chain.push(b);
    this.publish(b);
    for (let i = 0; i < kept.length; i++) this.core.finished();
  }
}

/** A fake cluster: `clients` gRPC clients (and optionally one JSON-RPC client) over one core and one miner. */
export interface FakeCluster {
  readonly core: FakeClientCore;
  readonly clients: FakeClientServer[];
  readonly jsonRpc: FakeJsonRpcServer | undefined;
  readonly miner: FakeMinerServer;
  close(): Promise<void>;
}

export async function startFakeCluster(
  accounts: KeySource,
  opts: { clients?: number; jsonRpc?: boolean; policy?: FakePolicy; miner?: FakeMinerPolicy } = {},
): Promise<FakeCluster> {
  const core = new FakeClientCore(accounts, opts.policy);
  const miner = await FakeMinerServer.start(core, opts.miner);
  const clients = await Promise.all(
    Array.from({ length: opts.clients ?? 1 }, () => FakeClientServer.start(core)),
  );
  const jsonRpc = opts.jsonRpc ? await FakeJsonRpcServer.start(core) : undefined;
  return {
    core,
    clients,
    jsonRpc,
    miner,
    async close() {
      await Promise.all([miner.close(), ...clients.map((c) => c.close()), jsonRpc?.close()]);
    },
  };
}

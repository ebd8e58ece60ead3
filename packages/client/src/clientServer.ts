/**
 * The client's gRPC edge: ClientService.SendTransactions, the bulk path for load generators.
 * Each transaction goes through exactly what eth_sendRawTransaction does (the senders of one call
 * recovered in one batch, or, when the call carries its signers' public keys, checked against
 * them in one batch: the same senders either way); results come back in request order. A client
 * that cannot reach any miner or storage node fails the whole call (UNAVAILABLE) rather than
 * blaming the transactions. A transaction no miner answered for while
 * others of the call were answered ends `fateUnknown` on its own (issue 15): one slow Submit call
 * towards a miner no longer fails every transaction of a bulk call, and so every sender's nonce.
 */
import { status } from '@grpc/grpc-js';
import {
  GrpcServer,
  grpcStatusMapping,
  type Logger,
  MAX_CHANNEL_MESSAGE_BYTES,
  parseHostPort,
  silentLogger,
  unaryRpc,
} from '@monsoon/edge';
import { keccak } from '@monsoon/keccak';
import {
  ClientServiceDefinition,
  type ClientServiceServer,
  isProtocolError,
  type SendResult,
  sendResultsToProto,
  sendTransactionsRequestFromProto,
} from '@monsoon/protocol';
import type { Client } from './client.js';
import { ClientErrorCode, isClientError } from './clientError.js';
import { MinerRefused } from './minerRefused.js';
import { rpcErrorOf } from './rpc/rpcError.js';

const UNAVAILABLE = new Set<string>([
  ClientErrorCode.MinerUnavailable,
  ClientErrorCode.StorageUnavailable,
  ClientErrorCode.Closed,
  ClientErrorCode.UnknownBlock,
]);

/**
 * A malformed request is the caller's fault; a client that cannot reach the network is
 * UNAVAILABLE; anything else is INTERNAL (logged).
 */
const grpcStatusOf = grpcStatusMapping([
  { is: isProtocolError, otherwise: status.INVALID_ARGUMENT },
  {
    is: isClientError,
    codes: Object.fromEntries([...UNAVAILABLE].map((code) => [code, status.UNAVAILABLE])),
  },
]);

/** A transaction no miner answered for: its result, and the error that fails a call where all are so. */
interface Unanswered {
  readonly result: SendResult;
  readonly error: unknown;
}

/** One transaction's fate as SendTransactions reports it; throws what must fail the whole call. */
async function fateOf(raw: Uint8Array, submitted: Promise<Uint8Array>): Promise<SendResult | Unanswered> {
  try {
    return { txHash: await submitted, accepted: true };
  } catch (e) {
    // A refused transaction's hash, hashed here (an accepted one's came with it).
    const txHash = keccak.keccak256(raw);
    if (isClientError(e, ClientErrorCode.MinerUnavailable))
      return { result: { txHash, accepted: false, error: e.message, fateUnknown: true }, error: e };
    if (e instanceof MinerRefused) return { txHash, accepted: false, error: e.message, refusedBy: 'miner' };
    if (isClientError(e, ClientErrorCode.StaleRetries))
      return { txHash, accepted: false, error: e.message, refusedBy: 'stale' };
    if (isClientError(e) && UNAVAILABLE.has(e.code)) throw e;
    const rpc = rpcErrorOf(e);
    if (rpc !== undefined) return { txHash, accepted: false, error: rpc.message, refusedBy: 'client' };
    throw e;
  }
}

export class ClientServer {
  private constructor(private readonly server: GrpcServer) {}

  /** Serves `client` on `listen` (`host:port`, port 0 = any); resolves once bound. */
  static async start(client: Client, listen: string, logger: Logger = silentLogger): Promise<ClientServer> {
    parseHostPort(listen, '--grpc'); // refused here, the error names the flag
    const server = await GrpcServer.create<ClientServiceServer>(
      { listen, maxReceiveMessageBytes: MAX_CHANNEL_MESSAGE_BYTES, shutdownTimeoutMs: 2_000 },
      { grpcStatusOf, logger },
      ClientServiceDefinition,
      {
        sendTransactions: unaryRpc({
          decode: sendTransactionsRequestFromProto,
          run: async ({ transactions: raws, senderKeys }) => {
            const submitted = client.submitTransactions(raws, senderKeys);
            const fates = await Promise.all(raws.map((raw, i) => fateOf(raw, submitted[i]!)));
            if (fates.every((f) => 'result' in f)) throw (fates[0] as Unanswered).error;
            return fates.map((f) => ('result' in f ? f.result : f));
          },
          encode: sendResultsToProto,
        }),
      },
    );
    return new ClientServer(server);
  }

  /** The bound address, `host:port` (the real port when `listen` asked for 0). */
  get address(): string {
    return this.server.address();
  }

  /** Stops serving; calls still running after 2 s are cut off. */
  close(): Promise<void> {
    return this.server.close();
  }
}

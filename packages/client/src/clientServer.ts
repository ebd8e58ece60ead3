/**
 * The client's gRPC edge: ClientService.SendTransactions, the bulk path for load generators.
 * Each transaction goes through exactly what eth_sendRawTransaction does; results come back in
 * request order. A client that cannot reach any miner or storage node fails the whole call
 * (UNAVAILABLE) rather than blaming the transactions.
 */
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData, status } from '@grpc/grpc-js';
import { formatHostPort, type Logger, parseHostPort, silentLogger } from '@monsoon/edge';
import { keccak } from '@monsoon/keccak';
import {
  ClientServiceDefinition,
  type ClientServiceServer,
  type clientPb,
  type SendResult,
  sendResultsToProto,
  sendTransactionsRequestFromProto,
} from '@monsoon/protocol';
import { type Client, MinerRefused } from './client.js';
import { ClientErrorCode, isClientError } from './clientError.js';
import { rpcErrorOf } from './rpc/rpcError.js';

const UNAVAILABLE = new Set<string>([
  ClientErrorCode.MinerUnavailable,
  ClientErrorCode.StorageUnavailable,
  ClientErrorCode.Closed,
  ClientErrorCode.UnknownBlock,
]);

/** One transaction's fate as SendTransactions reports it; throws what must fail the whole call. */
async function sendOne(client: Client, raw: Uint8Array): Promise<SendResult> {
  const txHash = keccak.keccak256(raw);
  try {
    await client.sendRawTransaction(raw);
    return { txHash, accepted: true };
  } catch (e) {
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
  private constructor(
    private readonly server: Server,
    readonly address: string,
  ) {}

  static async start(client: Client, listen: string, logger: Logger = silentLogger): Promise<ClientServer> {
    const at = parseHostPort(listen, '--grpc');
    const server = new Server({ 'grpc.max_receive_message_length': 256 * 1024 * 1024 });
    const handlers: ClientServiceServer = {
      sendTransactions(
        call: ServerUnaryCall<clientPb.SendTransactionsRequest, clientPb.SendTransactionsResponse>,
        cb: sendUnaryData<clientPb.SendTransactionsResponse>,
      ) {
        let raws: Uint8Array[];
        try {
          raws = sendTransactionsRequestFromProto(call.request);
        } catch (e) {
          cb({ code: status.INVALID_ARGUMENT, details: (e as Error).message });
          return;
        }
        Promise.all(raws.map((raw) => sendOne(client, raw))).then(
          (results) => cb(null, sendResultsToProto(results)),
          (e: unknown) => {
            const unavailable = isClientError(e) && UNAVAILABLE.has(e.code);
            if (!unavailable) logger.error('SendTransactions failed', { error: (e as Error).message });
            cb({ code: unavailable ? status.UNAVAILABLE : status.INTERNAL, details: (e as Error).message });
          },
        );
      },
    };
    server.addService(ClientServiceDefinition, handlers);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(formatHostPort(at), ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    return new ClientServer(server, formatHostPort({ host: at.host, port }));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.tryShutdown(() => resolve());
      setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, 2000).unref();
    });
  }
}

/** Transactions to a client over gRPC: ClientService.SendTransactions, the bulk path. */
import { credentials } from '@grpc/grpc-js';
import { channelOptions, unary } from '@monsoon/edge';
import { ClientServiceClient, sendResultsFromProto, sendTransactionsRequestToProto } from '@monsoon/protocol';
import { DriverError, DriverErrorCode } from './driverError.js';
import { ACCEPTED, type SubmitOutcome, type TxSubmitter } from './txSubmitter.js';

/** Sends each batch as one SendTransactions call with a deadline (and its signers' public keys when given). */
export class GrpcSubmitter implements TxSubmitter {
  private readonly client: ClientServiceClient;

  constructor(
    readonly name: string,
    private readonly deadlineMs: number,
  ) {
    this.client = new ClientServiceClient(name, credentials.createInsecure(), channelOptions());
  }

  async send(raws: readonly Uint8Array[], senderKeys?: Uint8Array): Promise<SubmitOutcome[]> {
    const request = sendTransactionsRequestToProto(
      senderKeys === undefined ? { transactions: raws } : { transactions: raws, senderKeys },
    );
    const res = await unary(this.client, this.client.sendTransactions, request, {
      deadline: Date.now() + this.deadlineMs,
    });
    const results = sendResultsFromProto(res);
    if (results.length !== raws.length) {
      throw new DriverError(
        DriverErrorCode.BadResponse,
        `SendTransactions from ${this.name}: expected ${raws.length} results, found ${results.length}`,
        { client: this.name, expected: raws.length, found: results.length },
      );
    }
    return results.map((r) => {
      if (r.accepted) return ACCEPTED;
      // No miner answered the client for it: it may yet be included (the sender is retired).
      if ('fateUnknown' in r) return { status: 'failed', error: r.error };
      return { status: 'refused', by: r.refusedBy, error: r.error };
    });
  }

  close(): void {
    this.client.close();
  }
}

/**
 * The miners a client talks to, in the order given: the chain is followed from, and
 * transactions submitted to, the current one; when it is down the client moves on to the next
 * (round robin), and both the chain stream and submissions use whichever is current.
 */

import { credentials } from '@grpc/grpc-js';
import { channelOptions } from '@monsoon/edge';
import { MinerServiceClient } from '@monsoon/protocol';

/** gRPC channel options towards miners: blocks with receipts and submissions can be large. */
const CHANNEL = channelOptions();

export class MinerPool {
  private readonly clients: MinerServiceClient[];
  /** Index (modulo the count) of the current miner: moves on when it is found down. */
  private at = 0;

  /** `addresses`: the miners' `host:port`s, at least one. */
  constructor(readonly addresses: readonly string[]) {
    this.clients = addresses.map((a) => new MinerServiceClient(a, credentials.createInsecure(), CHANNEL));
  }

  get size(): number {
    return this.clients.length;
  }

  /** The miner to use now. */
  get current(): MinerServiceClient {
    return this.clients[this.at % this.clients.length]!;
  }

  /** The `host:port` of the current miner. */
  get currentAddress(): string {
    return this.addresses[this.at % this.addresses.length]!;
  }

  /** The current miner is down: use the next one from now on. */
  next(): void {
    this.at++;
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}

/** How the driver hands transactions to a client, whatever the transport. */
import type { RefusedBy } from '@monsoon/protocol';

/**
 * Who refused a transaction: the client (before any miner), a miner, the client giving up after
 * stale witnesses, or `rpc`: refused over JSON-RPC, whose answer does not say which of the first
 * two it was.
 */
export type Refuser = RefusedBy | 'rpc';

/** Every refuser, in report order. */
export const REFUSERS: readonly Refuser[] = ['client', 'miner', 'stale', 'rpc'];

/** What became of one transaction of a call. */
export type SubmitOutcome =
  | { readonly status: 'accepted' }
  | { readonly status: 'refused'; readonly by: Refuser; readonly error: string }
  /** Its fate is unknown (a JSON-RPC internal error, or no miner answered the client for it): it may or may not have reached a miner. */
  | { readonly status: 'failed'; readonly error: string };

/** A client the driver sends batches of signed transactions to. */
export interface TxSubmitter {
  /** The endpoint, for reports. */
  readonly name: string;
  /**
   * Sends `raws` in one call (or a few, for a transport with a batch limit); resolves with one
   * outcome per transaction, in order, once each is accepted or refused. Rejects when the whole
   * call failed (unreachable, deadline, malformed answer): then nothing is known of any of them.
   * `senderKeys`: each transaction's signer's public key (x ‖ y, 64 bytes a transaction, in
   * order), for a transport that can carry them (gRPC: the client checks the signatures against
   * them in one batch instead of recovering each); others ignore them.
   */
  send(raws: readonly Uint8Array[], senderKeys?: Uint8Array): Promise<SubmitOutcome[]>;
  close(): void;
}

/** The shared accepted outcome. */
export const ACCEPTED: SubmitOutcome = { status: 'accepted' };

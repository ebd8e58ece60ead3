/**
 * Transactions to a client over Ethereum JSON-RPC: `eth_sendRawTransaction`, many in one
 * JSON-RPC batch. A `-32000`-style answer (geth's "nonce too low", a miner's refusal, …) is a
 * refusal; an internal error leaves the transaction's fate unknown.
 */
import { DriverError, DriverErrorCode } from './driverError.js';
import { ACCEPTED, type SubmitOutcome, type TxSubmitter } from './txSubmitter.js';

/** The most requests the Monsoon client (like geth) takes in one JSON-RPC batch. */
export const JSON_RPC_MAX_BATCH = 1000;

/** JSON-RPC 2.0's code for a fault of the server's own. */
const INTERNAL_ERROR = -32603;

interface RpcAnswer {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown };
}

/** Sends each batch as JSON-RPC batches of at most {@link JSON_RPC_MAX_BATCH} requests. */
export class JsonRpcSubmitter implements TxSubmitter {
  constructor(
    readonly name: string,
    private readonly deadlineMs: number,
  ) {}

  async send(raws: readonly Uint8Array[]): Promise<SubmitOutcome[]> {
    const parts: Promise<SubmitOutcome[]>[] = [];
    for (let i = 0; i < raws.length; i += JSON_RPC_MAX_BATCH)
      parts.push(this.sendBatch(raws.slice(i, i + JSON_RPC_MAX_BATCH)));
    return (await Promise.all(parts)).flat();
  }

  close(): void {}

  private async sendBatch(raws: readonly Uint8Array[]): Promise<SubmitOutcome[]> {
    const body = JSON.stringify(
      raws.map((raw, id) => ({
        jsonrpc: '2.0',
        id,
        method: 'eth_sendRawTransaction',
        params: [`0x${Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('hex')}`],
      })),
    );
    const res = await fetch(this.name, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(this.deadlineMs),
    });
    const text = await res.text();
    if (!res.ok) this.bad(`HTTP 200`, `HTTP ${res.status} ${text.slice(0, 200)}`);
    let answers: unknown;
    try {
      answers = JSON.parse(text);
    } catch {
      this.bad('a JSON batch answer', text.slice(0, 200));
    }
    if (!Array.isArray(answers)) this.bad('a JSON array (a batch answer)', text.slice(0, 200));
    const out: (SubmitOutcome | undefined)[] = new Array(raws.length).fill(undefined);
    for (const a of answers as RpcAnswer[]) {
      const id = a?.id;
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= raws.length) continue;
      out[id] = outcomeOf(a);
    }
    const missing = out.indexOf(undefined);
    if (missing >= 0) this.bad(`an answer for every request`, `none for id ${missing}`);
    return out as SubmitOutcome[];
  }

  private bad(expected: string, found: string): never {
    throw new DriverError(
      DriverErrorCode.BadResponse,
      `eth_sendRawTransaction batch to ${this.name}: expected ${expected}, found ${found}`,
      { client: this.name, expected, found },
    );
  }
}

function outcomeOf(a: RpcAnswer): SubmitOutcome {
  if (a.error === undefined || a.error === null) return ACCEPTED;
  const message = typeof a.error.message === 'string' ? a.error.message : JSON.stringify(a.error);
  return a.error.code === INTERNAL_ERROR
    ? { status: 'failed', error: message }
    : { status: 'refused', by: 'rpc', error: message };
}

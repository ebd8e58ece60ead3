/**
 * The driver's gRPC transport reads each SendTransactions result on its own: accepted, refused
 * (by whom), or fate unknown (no miner answered the client for it, issue 15), which the driver
 * counts failed and whose sender alone it retires. A ClientService stand-in on 127.0.0.1:0.
 */
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { keccak } from '@monsoon/keccak';
import { ClientServiceDefinition, sendResultsToProto } from '@monsoon/protocol';
import { GrpcSubmitter } from '@monsoon/workload';

const server = new Server();
let address: string;

beforeAll(async () => {
  server.addService(ClientServiceDefinition, {
    sendTransactions(call: { request: { transactions: Uint8Array[] } }, cb: (e: null, r: unknown) => void) {
      const [a, b, c] = call.request.transactions.map((raw) => keccak.keccak256(raw));
      cb(
        null,
        sendResultsToProto([
          { txHash: a!, accepted: true },
          { txHash: b!, accepted: false, error: 'nonce too low', refusedBy: 'miner' },
          { txHash: c!, accepted: false, error: 'MINER_UNAVAILABLE: no answer', fateUnknown: true },
        ]),
      );
    },
  } as never);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  address = `127.0.0.1:${port}`;
});
afterAll(() => server.forceShutdown());

describe('GrpcSubmitter', () => {
  it('gives each transaction its own outcome, a fate-unknown one failed', async () => {
    const s = new GrpcSubmitter(address, 10_000);
    try {
      const out = await s.send([Uint8Array.of(1), Uint8Array.of(2), Uint8Array.of(3)]);
      expect(out).toEqual([
        { status: 'accepted' },
        { status: 'refused', by: 'miner', error: 'nonce too low' },
        { status: 'failed', error: 'MINER_UNAVAILABLE: no answer' },
      ]);
    } finally {
      s.close();
    }
  });
});

/**
 * The client's gRPC edge (ClientService.SendTransactions on 127.0.0.1:0) over a stand-in client:
 * each transaction's fate comes back in request order; a malformed request is INVALID_ARGUMENT;
 * a client that cannot reach the network fails the whole call UNAVAILABLE (a transaction no
 * miner answered for, among answered ones, is reported fate unknown on its own); anything else is
 * INTERNAL.
 */
import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type Client, ClientError, ClientErrorCode, ClientServer, MinerRefused } from '@monsoon/client';
import { ERROR_CODE_TRAILER, unary } from '@monsoon/edge';
import { keccak } from '@monsoon/keccak';
import { ClientServiceClient, sendResultsFromProto } from '@monsoon/protocol';
import { rejection } from '@monsoon/test-utils';

/** The sender keys each submitTransactions call of a stand-in got (undefined: none). */
const keysSeen: (Uint8Array | undefined)[] = [];

/** A client whose submissions end as `fate(raw)` says (an accepted one with its hash, as Client's do). */
function standIn(fate: (raw: Uint8Array) => Promise<void>): Client {
  return {
    submitTransactions: (raws: Uint8Array[], senderKeys?: Uint8Array) => {
      keysSeen.push(senderKeys);
      return raws.map(async (raw) => {
        await fate(raw);
        return keccak.keccak256(raw);
      });
    },
  } as unknown as Client;
}

let server: ClientServer | undefined;
let grpc: ClientServiceClient | undefined;

afterEach(async () => {
  grpc?.close();
  await server?.close();
  server = grpc = undefined;
  keysSeen.length = 0;
});

async function serve(fate: (raw: Uint8Array) => Promise<void>): Promise<ClientServiceClient> {
  server = await ClientServer.start(standIn(fate), '127.0.0.1:0');
  expect(server.address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
  grpc = new ClientServiceClient(server.address, credentials.createInsecure());
  return grpc;
}

const refused = (p: Promise<unknown>) => rejection<ServiceError>(p);

describe('ClientServer', () => {
  it("reports each transaction's fate in request order", async () => {
    const c = await serve(async (raw) => {
      if (raw[0] === 2) throw new MinerRefused('nonce too low: next nonce 5, tx nonce 3');
      if (raw[0] === 3) throw new ClientError(ClientErrorCode.StaleRetries, 'stale 3 times');
    });
    const raws = [Uint8Array.of(1), Uint8Array.of(2), Uint8Array.of(3)];
    const res = await unary(c, c.sendTransactions, { transactions: raws, senderKeys: new Uint8Array(0) });
    expect(sendResultsFromProto(res)).toEqual([
      { txHash: keccak.keccak256(raws[0]!), accepted: true },
      {
        txHash: keccak.keccak256(raws[1]!),
        accepted: false,
        error: 'nonce too low: next nonce 5, tx nonce 3',
        refusedBy: 'miner',
      },
      {
        txHash: keccak.keccak256(raws[2]!),
        accepted: false,
        error: 'STALE_RETRIES: stale 3 times',
        refusedBy: 'stale',
      },
    ]);
  });

  it('refuses a malformed request with INVALID_ARGUMENT and its code', async () => {
    const c = await serve(async () => {});
    const e = await refused(
      unary(c, c.sendTransactions, { transactions: [new Uint8Array(0)], senderKeys: new Uint8Array(0) }),
    );
    expect({ code: e.code, trailer: e.metadata.get(ERROR_CODE_TRAILER) }).toEqual({
      code: status.INVALID_ARGUMENT,
      trailer: ['MISSING_FIELD'],
    });
    expect(e.details).toMatch(/^MISSING_FIELD: transactions\[0\]: expected non-empty bytes, found empty$/);
  });

  it('fails the whole call UNAVAILABLE when the network is out of reach, INTERNAL otherwise', async () => {
    const c = await serve(async (raw) => {
      if (raw[0] === 1) throw new ClientError(ClientErrorCode.MinerUnavailable, 'no miner answered');
      throw new RangeError('a bug');
    });
    const down = await refused(
      unary(c, c.sendTransactions, { transactions: [Uint8Array.of(1)], senderKeys: new Uint8Array(0) }),
    );
    expect({ code: down.code, details: down.details }).toEqual({
      code: status.UNAVAILABLE,
      details: 'MINER_UNAVAILABLE: no miner answered',
    });
    const bug = await refused(
      unary(c, c.sendTransactions, { transactions: [Uint8Array.of(2)], senderKeys: new Uint8Array(0) }),
    );
    expect({ code: bug.code, details: bug.details }).toEqual({
      code: status.INTERNAL,
      details: 'internal error: a bug',
    });
  });

  it('reports a transaction no miner answered for as fate unknown when others of the call were answered', async () => {
    const c = await serve(async (raw) => {
      if (raw[0] === 2) throw new ClientError(ClientErrorCode.MinerUnavailable, 'no miner answered');
    });
    const raws = [Uint8Array.of(1), Uint8Array.of(2)];
    const res = await unary(c, c.sendTransactions, { transactions: raws, senderKeys: new Uint8Array(0) });
    expect(sendResultsFromProto(res)).toEqual([
      { txHash: keccak.keccak256(raws[0]!), accepted: true },
      {
        txHash: keccak.keccak256(raws[1]!),
        accepted: false,
        error: 'MINER_UNAVAILABLE: no miner answered',
        fateUnknown: true,
      },
    ]);
  });

  it("hands the call's sender keys to the client as sent, none when the call has none", async () => {
    const c = await serve(async () => {});
    const raws = [Uint8Array.of(1), Uint8Array.of(2)];
    const keys = Uint8Array.from({ length: 128 }, (_, i) => i);
    await unary(c, c.sendTransactions, { transactions: raws, senderKeys: keys });
    await unary(c, c.sendTransactions, { transactions: raws, senderKeys: new Uint8Array(0) });
    expect(keysSeen).toEqual([keys, undefined]);
  });

  it('refuses sender keys that are not 64 bytes a transaction with INVALID_ARGUMENT, before the client sees the call', async () => {
    const c = await serve(async () => {});
    const raws = [Uint8Array.of(1), Uint8Array.of(2)];
    for (const length of [64, 127, 129, 192]) {
      const e = await refused(
        unary(c, c.sendTransactions, { transactions: raws, senderKeys: new Uint8Array(length) }),
      );
      expect({ code: e.code, trailer: e.metadata.get(ERROR_CODE_TRAILER), details: e.details }).toEqual({
        code: status.INVALID_ARGUMENT,
        trailer: ['BAD_LENGTH'],
        details: `BAD_LENGTH: senderKeys: expected 128 bytes, found ${length}`,
      });
    }
    expect(keysSeen).toEqual([]);
  });

  it('names the flag when the listen address is malformed', async () => {
    await expect(
      ClientServer.start(
        standIn(async () => {}),
        'nowhere',
      ),
    ).rejects.toThrow(/^BAD_ARGUMENT: --grpc "nowhere": expected host:port/);
  });
});

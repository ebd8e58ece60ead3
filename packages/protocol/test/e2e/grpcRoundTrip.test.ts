/**
 * A real @grpc/grpc-js server on 127.0.0.1:0 serving StorageService from a tiny fake, and a real
 * client: unary calls, a server stream that ends, an ApplyBlock echo, and a malformed request
 * refused as INVALID_ARGUMENT the way a server edge should. Domain values go in on one side and
 * come out equal on the other: bigint numbers, Uint8Array bytes.
 */

import {
  credentials,
  Server,
  ServerCredentials,
  type ServiceError,
  type StatusObject,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  type ApplyBlockRequest,
  applyBlockRequestFromProto,
  applyBlockRequestToProto,
  applyBlockResponseFromProto,
  applyBlockResponseToProto,
  atNumber,
  type GetAccountResponse,
  getAccountRequestFromProto,
  getAccountRequestToProto,
  getAccountResponseFromProto,
  getAccountResponseToProto,
  type Head,
  headFromProto,
  headToProto,
  isProtocolError,
  StorageServiceClient,
  StorageServiceDefinition,
  type StorageServiceServer,
} from '@monsoon/protocol';
import { address, filled, hash } from '../helpers/bytes.js';

const ACCOUNT: GetAccountResponse = {
  blockHash: hash(0xa0),
  number: (1n << 63n) + 7n, // beyond Number.MAX_SAFE_INTEGER: must stay a bigint end to end
  accountRlp: filled(70, 0x40),
  proof: [filled(532, 1), filled(83, 2)],
};

const HEADS: Head[] = [
  { hash: hash(1), number: 100n, headerRlp: filled(540, 1), stateRoot: hash(11) },
  { hash: hash(2), number: 101n, headerRlp: filled(541, 2), stateRoot: hash(12) },
];

/** What a server edge does with a handler's error: ProtocolError → INVALID_ARGUMENT, else INTERNAL. */
function toStatus(e: unknown): Partial<StatusObject> {
  if (isProtocolError(e)) return { code: status.INVALID_ARGUMENT, details: e.message };
  return { code: status.INTERNAL, details: e instanceof Error ? e.message : String(e) };
}

function unary<Req, Res>(handle: (req: Req) => Res) {
  return (call: { request: Req }, callback: sendUnaryData<Res>): void => {
    let res: Res;
    try {
      res = handle(call.request);
    } catch (e) {
      callback(toStatus(e), null);
      return;
    }
    callback(null, res);
  };
}

const unimplemented = (_call: unknown, callback: sendUnaryData<never>): void =>
  callback({ code: status.UNIMPLEMENTED }, null);

/** The fake: fixed account, two heads then the end, ApplyBlock echoing the roots of its shards. */
const fake: StorageServiceServer = {
  getAccount: unary((req) => {
    const r = getAccountRequestFromProto(req);
    return getAccountResponseToProto({
      ...ACCOUNT,
      number: r.at.kind === 'number' ? r.at.number : ACCOUNT.number,
    });
  }),
  getStorage: unimplemented,
  getCode: unimplemented,
  batchGet: unimplemented,
  getNodes: unimplemented,
  getShardRoots: unimplemented,
  subscribeHeads: (call) => {
    for (const h of HEADS) call.write(headToProto(h));
    call.end();
  },
  applyBlock: unary((req) => {
    const r = applyBlockRequestFromProto(req, { shardCount: 16 });
    const mine = new Set(r.shards.map((s) => s.shard));
    return applyBlockResponseToProto({
      blockHash: hash(0xbb),
      number: 101n,
      roots: r.expectedRoots.filter((x) => mine.has(x.shard)),
    });
  }),
  connectRdma: unimplemented,
  getBlockUpdates: unimplemented,
  getCheckpoint: (call) => {
    call.emit('error', { code: status.UNIMPLEMENTED });
  },
};

let server: Server;
let client: StorageServiceClient;

beforeAll(async () => {
  server = new Server();
  server.addService(StorageServiceDefinition, fake);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  client = new StorageServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await new Promise<void>((resolve) => (server ? server.tryShutdown(() => resolve()) : resolve()));
});

/** A unary call as a promise. */
function call<Req, Res>(
  method: (req: Req, cb: (err: ServiceError | null, res: Res) => void) => unknown,
  req: Req,
): Promise<Res> {
  return new Promise((resolve, reject) =>
    method.call(client, req, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

describe('StorageService over a real socket', () => {
  it('GetAccount: bytes and a 64-bit number come back as sent', async () => {
    const req = getAccountRequestToProto({
      address: address(3),
      at: atNumber(ACCOUNT.number),
      omitLevels: 0,
    });
    const res = getAccountResponseFromProto(await call(client.getAccount, req));
    expect(res).toStrictEqual(ACCOUNT);
    expect(typeof res.number).toBe('bigint');
  });

  it('SubscribeHeads: streams two heads, then ends', async () => {
    const got: Head[] = [];
    for await (const h of client.subscribeHeads({})) got.push(headFromProto(h));
    expect(got).toStrictEqual(HEADS);
  });

  it('ApplyBlock: the request arrives intact and the echo comes back', async () => {
    const req: ApplyBlockRequest = {
      headerRlp: filled(540, 3),
      shards: [
        {
          shard: 4,
          accounts: [
            {
              deleted: false,
              address: address(9),
              nonce: 3n,
              balance: 10n ** 30n,
              code: undefined,
              clearStorage: false,
              storage: [{ slot: hash(1), value: Uint8Array.of(42) }],
            },
          ],
        },
      ],
      expectedRoots: Array.from({ length: 16 }, (_, shard) => ({ shard, root: hash(0x80 + shard) })),
    };
    const res = applyBlockResponseFromProto(await call(client.applyBlock, applyBlockRequestToProto(req)), {
      shardCount: 16,
    });
    expect(res).toStrictEqual({
      blockHash: hash(0xbb),
      number: 101n,
      roots: [{ shard: 4, root: hash(0x84) }],
    });
  });

  it('ApplyBlock: a malformed request is refused as INVALID_ARGUMENT, saying what was wrong', async () => {
    const bad = { headerRlp: filled(10), shards: [], expectedRoots: [{ shard: 0, root: filled(31) }] };
    const err = await call(client.applyBlock, bad).then(
      () => undefined,
      (e: ServiceError) => e,
    );
    expect(err?.code).toBe(status.INVALID_ARGUMENT);
    expect(err?.details).toBe(
      'BAD_SHARD: expectedRoots: expected a root for each of 16 shards, found 1 roots',
    );
  });
});

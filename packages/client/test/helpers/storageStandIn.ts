/**
 * An in-process storage node for the client's tests: a gRPC server on 127.0.0.1:0 answering
 * GetShardRoots and BatchGet from a real state tree at one block. It can lie: claim a wrong
 * balance under an honest proof ('value'), send a forged proof node ('proof'), claim a wrong slot
 * value under an honest proof ('slotValue'), or leave out a slot's proof ('slotProof').
 */
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { encodeAccount, type StateTree } from '@monsoon/dsm-tree';
import {
  batchGetRequestFromProto,
  batchGetResponseToProto,
  getShardRootsResponseToProto,
  StorageServiceDefinition,
  type storagePb,
} from '@monsoon/protocol';

export type Lie = 'none' | 'value' | 'proof' | 'slotValue' | 'slotProof';

/** Serves `state` as block 1 with hash `blockHash`; resolves once bound. */
export async function serveStorage(
  state: StateTree,
  blockHash: Uint8Array,
  lie: Lie = 'none',
): Promise<{ address: string; server: Server }> {
  const root = state.root();
  const server = new Server();
  const impl = {
    getShardRoots(_c: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<storagePb.GetShardRootsResponse>) {
      cb(
        null,
        getShardRootsResponseToProto({
          blockHash,
          number: 1n,
          stateRoot: root,
          shardCount: 16,
          roots: Array.from({ length: 16 }, (_, shard) => ({
            shard,
            root: state.accounts.refAt([shard]) ?? new Uint8Array(0),
          })),
        }),
      );
    },
    batchGet(
      call: ServerUnaryCall<storagePb.BatchGetRequest, unknown>,
      cb: sendUnaryData<storagePb.BatchGetResponse>,
    ) {
      const req = batchGetRequestFromProto(call.request);
      const bag = state.proveAccounts(req.queries.map((q) => q.address));
      if (lie !== 'slotProof')
        for (const q of req.queries) bag.push(...state.proveStorageMany(q.address, [...q.slots]));
      const slotValue = (v: Uint8Array): Uint8Array => {
        if (lie !== 'slotValue') return v;
        if (v.length === 0) return Uint8Array.of(1);
        const w = v.slice();
        w[w.length - 1]! ^= 1;
        return w;
      };
      const results = req.queries.map((q) => {
        let a = state.getAccount(q.address);
        if (a !== undefined && lie === 'value') a = { ...a, balance: a.balance + 1n };
        return {
          address: q.address,
          accountRlp: a === undefined ? undefined : encodeAccount(a),
          slotValues: q.slots.map((s) => slotValue(state.getStorage(q.address, s) ?? new Uint8Array(0))),
          code: (q.code && a !== undefined && state.getCode(a.codeHash)) || new Uint8Array(0),
        };
      });
      if (lie === 'proof') {
        // Swap the leaf of the first account for a forged one with another balance.
        const leafIndex = bag.findIndex((n) => n.length > 60 && n.length < 120);
        const forged = bag[leafIndex]!.slice();
        forged[forged.length - 40]! ^= 1;
        bag[leafIndex] = forged;
      }
      cb(null, batchGetResponseToProto({ blockHash, number: 1n, results, bag }, req));
    },
  };
  server.addService(StorageServiceDefinition, impl as never);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { address: `127.0.0.1:${port}`, server };
}

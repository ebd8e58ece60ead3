// An in-process storage node for the client micro-benchmarks: GetShardRoots and BatchGet answered
// from a state tree at one block (honest: every proof and value as the tree gives them).
import { keccak } from '@monsoon/keccak';
import { batchGetRequestFromProto, batchGetResponseToProto, getShardRootsResponseToProto } from '@monsoon/protocol';

/** The StorageService handlers for `state` as block 1 with hash `blockHash`. */
export function storageStandIn(state, blockHash) {
  const stateRoot = state.root();
  return {
    getShardRoots(_c, cb) {
      cb(null, getShardRootsResponseToProto({ blockHash, number: 1n, stateRoot, shardCount: 16,
        roots: Array.from({ length: 16 }, (_, shard) => ({ shard, root: state.accounts.refAt([shard]) ?? new Uint8Array(0) })) }));
    },
    batchGet(call, cb) {
      const req = batchGetRequestFromProto(call.request);
      const bag = state.proveAccounts(req.queries.map((q) => q.address));
      for (const q of req.queries) bag.push(...state.proveStorageMany(q.address, [...q.slots]));
      const results = req.queries.map((q) => {
        const a = state.getAccount(q.address);
        return { address: q.address, accountRlp: state.accounts.get(keccak.keccak256(q.address)),
          slotValues: q.slots.map((s) => state.getStorage(q.address, s) ?? new Uint8Array(0)),
          code: (q.code && a !== undefined && state.getCode(a.codeHash)) || new Uint8Array(0) };
      });
      cb(null, batchGetResponseToProto({ blockHash, number: 1n, results, bag }, req));
    },
  };
}

/**
 * What the miner's e2e tests share (processes are @monsoon/test-utils' `startRole('miner', …)`):
 * a genesis of funded accounts to submit transfers from, signed transfers, Submit over gRPC.
 */
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { credentials } from '@grpc/grpc-js';
import { makeAccount, StateTree } from '@monsoon/dsm-tree';
import { unary } from '@monsoon/edge';
import { defaultChainRules, makeCommon } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import {
  headFromProto,
  MinerServiceClient,
  type SubmitRequest,
  type SubmitResponse,
  submitRequestToProto,
  submitResponseFromProto,
} from '@monsoon/protocol';
import { fundedGenesis } from '@monsoon/test-utils';

export const rules = { ...defaultChainRules, chainId: 1337n };
const common = makeCommon(rules.chainId);
export const keys = Array.from({ length: 64 }, (_, i) => keccak.keccak256(Uint8Array.of(9, i)));
export const addrs = keys.map((k) => privateToAddress(k));

/** 64 accounts of 1000 ether each. */
export const genesis = fundedGenesis(addrs, rules.chainId, rules.gasLimit);

/** The genesis state in full, as a client holding it builds bags from. */
export function genesisTree(): StateTree {
  const full = new StateTree();
  for (const a of genesis.alloc) full.putAccount(a.address, makeAccount({ balance: a.balance }));
  return full;
}

/** A signed transfer from account `from`, nonce 0. */
export function transfer(from: number, to: Uint8Array, value: bigint): Uint8Array {
  return createFeeMarket1559Tx(
    { nonce: 0n, to, value, gasLimit: 21_000n, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1n },
    { common },
  )
    .sign(keys[from]!)
    .serialize();
}

/** Submit over gRPC. */
export async function submit(address: string, req: SubmitRequest): Promise<SubmitResponse> {
  const client = new MinerServiceClient(address, credentials.createInsecure());
  try {
    return submitResponseFromProto(await unary(client, client.submit, submitRequestToProto(req)));
  } finally {
    client.close();
  }
}

/** The miner's head as its SubscribeHeads stream gives it first. */
export function minerHead(address: string) {
  const c = new MinerServiceClient(address, credentials.createInsecure());
  return new Promise<ReturnType<typeof headFromProto>>((resolve, reject) => {
    const s = c.subscribeHeads({});
    s.once('data', (h) => {
      resolve(headFromProto(h));
      s.cancel();
      c.close();
    });
    s.once('error', (e) => (String(e).includes('CANCELLED') ? undefined : reject(e)));
  });
}

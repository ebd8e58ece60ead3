/**
 * eth_createAccessList's algorithm (accessList.ts) over a real state tree: a contract that reads
 * and writes its storage, reads another account's balance and calls a third gets exactly those
 * in its list (slots sorted, accounts by address; the sender, recipient and precompiles left
 * out), an access list given in the request is kept, a revert is reported as geth words it, and
 * the gas it answers is what @ethereumjs/vm's runTx charges an EIP-2930 transaction carrying
 * that list (refund included).
 */
import { createAccessList2930Tx } from '@ethereumjs/tx';
import { createVM, runTx } from '@ethereumjs/vm';
import { describe, expect, it } from '@jest/globals';
import { fromHex, makeAccount, StateTree, toHex } from '@monsoon/dsm-tree';
import { type BlockEnv, blockOf, defaultChainRules, makeCommon, TreeStateManager } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import { computeAddress } from 'ethers';
import { createAccessList } from '../../src/accessList.js';
import type { CallRequest } from '../../src/rpc/backend.js';

const rules = defaultChainRules;
const common = makeCommon(rules.chainId);
const KEY = keccak.keccak256(new TextEncoder().encode('access list test key'));
const FROM = fromHex(computeAddress(`0x${toHex(KEY)}`));
const CONTRACT = fromHex(`0x${'cc'.repeat(20)}`);
const RICH = fromHex(`0x${'bb'.repeat(20)}`);
const CALLEE = fromHex(`0x${'dd'.repeat(20)}`);
const REVERTER = fromHex(`0x${'ee'.repeat(20)}`);
const env: BlockEnv = {
  number: 5n,
  timestamp: 1_700_000_000n,
  coinbase: new Uint8Array(20),
  gasLimit: rules.gasLimit,
};

/** SLOAD 1; BALANCE(rich); STATICCALL(callee); SSTORE(3, 0) (a refund); SSTORE(2, 1); ECRECOVER (a precompile) by CALL; STOP. */
const CODE = fromHex(
  [
    '0x6001545073',
    toHex(RICH),
    '3150',
    '600060006000600073',
    toHex(CALLEE),
    '5afa50',
    '600060035560016002556000600060006000600060015af150',
    '00',
  ].join(''),
);

function stateTree(): StateTree {
  const t = new StateTree();
  t.putAccount(FROM, makeAccount({ balance: 10n ** 20n }));
  t.putAccount(RICH, makeAccount({ balance: 5n }));
  t.putAccount(CONTRACT, makeAccount({ codeHash: t.putCode(CODE) }));
  t.putAccount(REVERTER, makeAccount({ codeHash: t.putCode(fromHex('0x60006000fd')) }));
  t.putStorage(CONTRACT, word(1n), Uint8Array.of(7));
  t.putStorage(CONTRACT, word(3n), Uint8Array.of(9));
  return t;
}

function word(n: bigint): Uint8Array {
  return fromHex(`0x${n.toString(16).padStart(64, '0')}`);
}

/** What runTx charges an EIP-2930 transaction `req` carrying `accessList`, on the same state. */
async function runTxGas(req: CallRequest, accessList: { address: Uint8Array; storageKeys: Uint8Array[] }[]) {
  const vm = await createVM({ common, stateManager: new TreeStateManager(stateTree()) });
  const tx = createAccessList2930Tx(
    {
      chainId: rules.chainId,
      nonce: 0n,
      gasPrice: rules.baseFeePerGas,
      gasLimit: 1_000_000n,
      to: req.to,
      data: req.data ?? new Uint8Array(0),
      accessList: accessList.map((e) => [e.address, e.storageKeys]),
    },
    { common },
  ).sign(KEY);
  const r = await runTx(vm, { tx, block: blockOf(env, rules, common), skipHardForkValidation: true });
  return r.totalGasSpent;
}

describe('createAccessList', () => {
  it('lists what the call touches and answers the gas an EIP-2930 transaction with it uses', async () => {
    const req: CallRequest = { from: FROM, to: CONTRACT, gas: 1_000_000n };
    const r = await createAccessList(stateTree(), req, env, rules, common);
    expect(r.error).toBeUndefined();
    expect(
      r.accessList.map((e) => [toHex(e.address), e.storageKeys.map((k) => BigInt(`0x${toHex(k)}`))]),
    ).toEqual([
      [toHex(RICH), []],
      [toHex(CONTRACT), [1n, 2n, 3n]],
      [toHex(CALLEE), []],
    ]);
    expect(r.gasUsed).toBe(
      await runTxGas(
        req,
        [...r.accessList].map((e) => ({ ...e, storageKeys: [...e.storageKeys] })),
      ),
    );
  });

  it('keeps an access list the request brings, but not its sender, recipient or precompiles', async () => {
    const extra = fromHex(`0x${'ab'.repeat(20)}`);
    const req: CallRequest = {
      from: FROM,
      to: CONTRACT,
      accessList: [
        { address: extra, storageKeys: [word(9n)] },
        { address: FROM, storageKeys: [] },
        { address: fromHex(`0x${'00'.repeat(19)}01`), storageKeys: [] },
      ],
    };
    const r = await createAccessList(stateTree(), req, env, rules, common);
    expect(r.accessList.map((e) => toHex(e.address))).toEqual([
      toHex(extra),
      toHex(RICH),
      toHex(CONTRACT),
      toHex(CALLEE),
    ]);
    expect(r.accessList[0]!.storageKeys).toEqual([word(9n)]);
  });

  it('reports a revert as geth words it, with the gas used', async () => {
    const r = await createAccessList(stateTree(), { from: FROM, to: REVERTER }, env, rules, common);
    expect(r).toEqual({ accessList: [], gasUsed: 21_000n + 6n, error: 'execution reverted' });
  });

  it('refuses a call whose gas is below its intrinsic gas', async () => {
    await expect(
      createAccessList(stateTree(), { from: FROM, to: CONTRACT, gas: 20_000n }, env, rules, common),
    ).rejects.toMatchObject({
      code: -32000,
      message: 'failed to apply transaction: intrinsic gas too low: have 20000, want 21000',
    });
  });
});

/**
 * ethers v6 and viem against RpcServer on 127.0.0.1:0, over the fake backend: each library
 * parses our JSON into its own types (it refuses shapes it does not accept), and the values it
 * ends with are the backend's. Transactions are checked by re-serialising what each library
 * parsed and comparing with the raw signed bytes, so every signed field must round-trip.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Contract, JsonRpcProvider, Network, Transaction, type TransactionResponse, toBeHex } from 'ethers';
import {
  type BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  type Hex,
  http,
  type PublicClient,
  serializeTransaction,
  type Transaction as ViemTransaction,
  keccak256 as viemKeccak,
} from 'viem';
import { RpcServer } from '../../../src/rpc/index.js';
import {
  alice,
  BASE_FEE,
  BOB_TOKENS,
  bob,
  CHAIN_ID,
  ETHER,
  type Fixture,
  GWEI,
  MINER,
  makeFixture,
  PRIORITY_FEE,
  signTransfer,
  TOKEN,
  TOKEN_CODE,
  tokenAbi,
} from './fakeBackend.js';

let f: Fixture;
let server: RpcServer;
let provider: JsonRpcProvider;
let client: PublicClient;
beforeAll(async () => {
  f = await makeFixture();
  server = await RpcServer.create({ listen: '127.0.0.1:0' }, { backend: f.backend });
  const network = Network.from(Number(CHAIN_ID));
  provider = new JsonRpcProvider(server.url, network, { staticNetwork: network });
  client = createPublicClient({ transport: http(server.url) });
});
afterAll(async () => {
  provider.destroy();
  await server.close();
});

const hex = (b: Uint8Array): Hex => `0x${Buffer.from(b).toString('hex')}`;
const transfer = (amount: bigint) => tokenAbi.encodeFunctionData('transfer', [bob.address, amount]) as Hex;
const balanceOfBob = tokenAbi.encodeFunctionData('balanceOf', [bob.address]) as Hex;

/** The raw bytes of what ethers parsed. */
function ethersRaw(t: TransactionResponse): string {
  const fees =
    t.type === 2
      ? { maxFeePerGas: t.maxFeePerGas, maxPriorityFeePerGas: t.maxPriorityFeePerGas }
      : { gasPrice: t.gasPrice };
  return Transaction.from({
    type: t.type,
    chainId: t.chainId,
    nonce: t.nonce,
    gasLimit: t.gasLimit,
    to: t.to,
    value: t.value,
    data: t.data,
    ...fees,
    ...(t.type === 0 ? {} : { accessList: t.accessList }),
    signature: t.signature,
  }).serialized;
}

/** The raw bytes of what viem parsed. */
function viemRaw(t: ViemTransaction): Hex {
  const base = { chainId: t.chainId!, nonce: t.nonce, gas: t.gas, to: t.to, value: t.value, data: t.input };
  const sig = { r: t.r, s: t.s, v: t.v, yParity: t.yParity };
  switch (t.type) {
    case 'legacy':
      return serializeTransaction({ ...base, type: 'legacy', gasPrice: t.gasPrice }, sig);
    case 'eip2930':
      return serializeTransaction(
        { ...base, type: 'eip2930', gasPrice: t.gasPrice, accessList: t.accessList },
        sig,
      );
    case 'eip1559':
      return serializeTransaction(
        {
          ...base,
          type: 'eip1559',
          maxFeePerGas: t.maxFeePerGas,
          maxPriorityFeePerGas: t.maxPriorityFeePerGas,
          accessList: t.accessList,
        },
        sig,
      );
    default:
      throw new Error(`unexpected transaction type ${t.type}`);
  }
}

describe('ethers v6 JsonRpcProvider', () => {
  it('reads balances, nonces, code and storage', async () => {
    expect(await provider.getBalance(alice.address)).toBe(9n * ETHER);
    expect(await provider.getBalance(alice.address, 0)).toBe(10n * ETHER);
    expect(await provider.getTransactionCount(bob.address, 'pending')).toBe(2);
    expect(await provider.getTransactionCount(bob.address, 'latest')).toBe(1);
    expect(await provider.getCode(TOKEN)).toBe(hex(TOKEN_CODE));
    expect(await provider.getStorage(TOKEN, 1)).toBe(toBeHex(0x2a, 32));
    expect(await provider.getBlockNumber()).toBe(1);
  });

  it('calls and estimates, surfacing reverts with their reason and custom errors', async () => {
    expect(BigInt(await provider.call({ to: TOKEN, data: balanceOfBob }))).toBe(BOB_TOKENS);
    await expect(provider.call({ to: TOKEN, data: transfer(5000n) })).rejects.toMatchObject({
      code: 'CALL_EXCEPTION',
      reason: 'not enough tokens',
    });
    const token = new Contract(TOKEN, tokenAbi, provider);
    expect(await token.getFunction('balanceOf').staticCall(bob.address)).toBe(BOB_TOKENS);
    await expect(token.getFunction('transfer').staticCall(bob.address, 999n)).rejects.toMatchObject({
      code: 'CALL_EXCEPTION',
      revert: { name: 'Insufficient', args: [5n, 999n] },
    });
    await expect(token.getFunction('transfer').staticCall(bob.address, 0n)).rejects.toMatchObject({
      code: 'CALL_EXCEPTION',
      reason: 'Panic due to DIVIDE_BY_ZERO(18)',
    });
    expect(await provider.estimateGas({ from: alice.address, to: TOKEN, data: transfer(5n) })).toBe(53_000n);
    await expect(
      provider.estimateGas({ from: alice.address, to: TOKEN, data: transfer(5000n) }),
    ).rejects.toMatchObject({ code: 'CALL_EXCEPTION', reason: 'not enough tokens' });
  });

  it('reads fee data', async () => {
    const fees = await provider.getFeeData();
    expect(fees.gasPrice).toBe(BASE_FEE + PRIORITY_FEE);
    expect(fees.maxPriorityFeePerGas).toBe(PRIORITY_FEE);
    // ethers: 2 × the latest block's base fee + the priority fee.
    expect(fees.maxFeePerGas).toBe(2n * BASE_FEE + PRIORITY_FEE);
  });

  it('reads blocks with hashes and with transactions', async () => {
    const b = (await provider.getBlock(1))!;
    expect(b.hash).toBe(hex(f.block1.hash));
    expect(b.parentHash).toBe(hex(f.genesis.hash));
    expect(b.number).toBe(1);
    expect(b.timestamp).toBe(1_700_000_012);
    expect(b.miner.toLowerCase()).toBe(MINER);
    expect(b.baseFeePerGas).toBe(GWEI);
    expect(b.gasUsed).toBe(106_000n);
    expect(b.difficulty).toBe(1000n);
    expect(b.transactions).toEqual(f.hashes);
    const full = (await provider.getBlock('latest', true))!;
    expect(full.prefetchedTransactions.map((t) => t.hash)).toEqual(f.hashes);
    expect(full.prefetchedTransactions.map(ethersRaw)).toEqual(f.raws);
    expect(await provider.getBlock(7)).toBeNull();
  });

  it('reads each transaction type back to its raw bytes, mined and pending', async () => {
    for (let i = 0; i < f.raws.length; i++) {
      const t = (await provider.getTransaction(f.hashes[i]!))!;
      expect(t.hash).toBe(f.hashes[i]);
      expect(t.from).toBe(Transaction.from(f.raws[i]!).from);
      expect(t.blockNumber).toBe(1);
      expect(t.index).toBe(i);
      expect(ethersRaw(t)).toBe(f.raws[i]);
    }
    const pending = (await provider.getTransaction(f.pendingHash))!;
    expect(pending.blockNumber).toBeNull();
    expect(pending.blockHash).toBeNull();
    expect(ethersRaw(pending)).toBe(f.pendingRaw);
    expect(await provider.getTransaction(toBeHex(1, 32))).toBeNull();
  });

  it('reads receipts with their logs', async () => {
    const r1 = (await provider.getTransactionReceipt(f.hashes[1]!))!;
    expect(r1.status).toBe(1);
    expect(r1.index).toBe(1);
    expect(r1.blockHash).toBe(hex(f.block1.hash));
    expect(r1.gasUsed).toBe(35_000n);
    expect(r1.cumulativeGasUsed).toBe(56_000n);
    expect(r1.fee).toBe(35_000n * 2n * GWEI);
    expect(r1.logs.map((l) => l.index)).toEqual([0, 1]);
    const parsed = r1.logs.map((l) => tokenAbi.parseLog(l)!);
    expect(parsed.map((p) => [p.name, p.args[2]])).toEqual([
      ['Transfer', 5n],
      ['Transfer', 1n],
    ]);
    const r2 = (await provider.getTransactionReceipt(f.hashes[2]!))!;
    expect(r2.contractAddress!.toLowerCase()).toBe(f.created);
    expect(r2.to).toBeNull();
    expect(r2.logs.map((l) => l.index)).toEqual([2]);
    // ethers' own check that the receipt and the transaction agree.
    const t = (await provider.getTransaction(f.hashes[2]!))!;
    expect((await t.wait())!.hash).toBe(f.hashes[2]);
  });

  it('broadcasts a signed transaction', async () => {
    const raw = await signTransfer(bob, 2, 2, alice.address, 1n);
    const sent = await provider.broadcastTransaction(raw);
    expect(sent.hash).toBe(Transaction.from(raw).hash);
    await expect(provider.broadcastTransaction(f.raws[2]!)).rejects.toMatchObject({ code: 'NONCE_EXPIRED' });
  });
});

describe('viem public client', () => {
  it('reads balances, nonces, code and storage', async () => {
    expect(await client.getBalance({ address: alice.address as Hex })).toBe(9n * ETHER);
    expect(await client.getBalance({ address: alice.address as Hex, blockNumber: 0n })).toBe(10n * ETHER);
    expect(await client.getTransactionCount({ address: bob.address as Hex, blockTag: 'pending' })).toBe(2);
    expect(await client.getCode({ address: TOKEN })).toBe(hex(TOKEN_CODE));
    expect(await client.getStorageAt({ address: TOKEN, slot: '0x1' })).toBe(toBeHex(0x2a, 32));
    expect(await client.getBlockNumber()).toBe(1n);
    expect(await client.getChainId()).toBe(Number(CHAIN_ID));
  });

  it('calls and estimates, surfacing reverts with their reason and custom errors', async () => {
    expect(BigInt((await client.call({ to: TOKEN, data: balanceOfBob })).data!)).toBe(BOB_TOKENS);
    await expect(client.call({ to: TOKEN, data: transfer(5000n) })).rejects.toThrow(/not enough tokens/);
    const viemAbi = [
      {
        type: 'function',
        name: 'transfer',
        stateMutability: 'nonpayable',
        inputs: [
          { name: 'to', type: 'address' },
          { name: 'amount', type: 'uint256' },
        ],
        outputs: [{ name: '', type: 'bool' }],
      },
      {
        type: 'error',
        name: 'Insufficient',
        inputs: [
          { name: 'have', type: 'uint256' },
          { name: 'want', type: 'uint256' },
        ],
      },
    ] as const;
    const revertOf = async (amount: bigint) => {
      try {
        await client.simulateContract({
          address: TOKEN,
          abi: viemAbi,
          functionName: 'transfer',
          args: [bob.address as Hex, amount],
          account: alice.address as Hex,
        });
      } catch (e) {
        const reverted = (e as BaseError).walk((x) => x instanceof ContractFunctionRevertedError);
        if (reverted instanceof ContractFunctionRevertedError) return reverted;
        throw e;
      }
      throw new Error('the call did not revert');
    };
    expect((await revertOf(5000n)).reason).toBe('not enough tokens');
    const custom = await revertOf(999n);
    expect(custom.data?.errorName).toBe('Insufficient');
    expect(custom.data?.args).toEqual([5n, 999n]);
    expect(await client.estimateGas({ account: alice.address as Hex, to: TOKEN, data: transfer(5n) })).toBe(
      53_000n,
    );
  });

  it('estimates fees and reads fee history', async () => {
    expect(await client.getGasPrice()).toBe(BASE_FEE + PRIORITY_FEE);
    expect(await client.estimateMaxPriorityFeePerGas()).toBe(PRIORITY_FEE);
    const fees = await client.estimateFeesPerGas();
    expect(fees.maxPriorityFeePerGas).toBe(PRIORITY_FEE);
    // viem: 1.2 × the latest block's base fee + the priority fee.
    expect(fees.maxFeePerGas).toBe((BASE_FEE * 12n) / 10n + PRIORITY_FEE);
    const history = await client.getFeeHistory({ blockCount: 2, rewardPercentiles: [25, 75] });
    expect(history.oldestBlock).toBe(0n);
    expect(history.baseFeePerGas).toEqual([BASE_FEE, BASE_FEE, BASE_FEE]);
    expect(history.reward).toEqual([
      [25n * GWEI, 75n * GWEI],
      [25n * GWEI, 75n * GWEI],
    ]);
  });

  it('reads blocks with transactions', async () => {
    const b = await client.getBlock({ blockNumber: 1n, includeTransactions: true });
    expect(b.hash).toBe(hex(f.block1.hash));
    expect(b.number).toBe(1n);
    expect(b.baseFeePerGas).toBe(GWEI);
    expect(b.totalDifficulty).toBe(1000n);
    expect(b.withdrawals).toEqual([]);
    expect(b.transactions.map((t) => t.hash)).toEqual(f.hashes);
    expect(b.transactions.map((t) => t.type)).toEqual(['legacy', 'eip2930', 'eip1559']);
    expect(b.transactions.map(viemRaw)).toEqual(f.raws);
    const latest = await client.getBlock();
    expect(latest.transactions).toEqual(f.hashes);
  });

  it('reads each transaction type back to its raw bytes, and its receipt', async () => {
    for (let i = 0; i < f.raws.length; i++) {
      const t = await client.getTransaction({ hash: f.hashes[i] as Hex });
      expect(t.from).toBe(Transaction.from(f.raws[i]!).from!.toLowerCase());
      expect(t.blockNumber).toBe(1n);
      expect(t.transactionIndex).toBe(i);
      expect(viemKeccak(viemRaw(t))).toBe(f.hashes[i]);
    }
    const pending = await client.getTransaction({ hash: f.pendingHash as Hex });
    expect(pending.blockNumber).toBeNull();
    expect(viemRaw(pending)).toBe(f.pendingRaw);
    const r = await client.getTransactionReceipt({ hash: f.hashes[2] as Hex });
    expect(r.status).toBe('success');
    expect(r.contractAddress).toBe(f.created);
    expect(r.effectiveGasPrice).toBe(BASE_FEE + GWEI / 2n);
    expect(r.logs.map((l) => l.logIndex)).toEqual([2]);
    expect(r.logs[0]!.transactionHash).toBe(f.hashes[2]);
  });

  it('reads an EIP-1186 proof and sends a raw transaction', async () => {
    const p = await client.getProof({ address: TOKEN, storageKeys: [toBeHex(1, 32) as Hex] });
    expect(p.nonce).toBe(7);
    expect(p.balance).toBe(5n);
    expect(p.storageProof).toEqual([{ key: toBeHex(1, 32), value: 1n, proof: ['0xc0'] }]);
    const raw = (await signTransfer(alice, 0, 0, bob.address)) as Hex;
    expect(await client.sendRawTransaction({ serializedTransaction: raw })).toBe(viemKeccak(raw));
  });
});

/**
 * The client as a dapp meets it: real processes on 127.0.0.1 — two storage nodes (shards 0-7,
 * 8-15), a miner, a client — over the workload's genesis (funded accounts and the MonsoonToken
 * ERC-20). ethers v6 and viem, used as a dapp uses them, send ether and token transfers, wait
 * for receipts, read balances with eth_call and check eth_getProof against the block's state
 * root; transactions that certainly fail are refused with geth's errors before any miner.
 * Events: while token transfers are mined, viem's watchContractEvent over HTTP (filters) and over
 * WebSocket (eth_subscribe, same port) and ethers' `contract.on('Transfer', …)` hear them, and
 * getLogs / getContractEvents read them back; eth_createAccessList gives the list with which the
 * transfer, sent as an EIP-2930 transaction, uses exactly the gas it said.
 * The chain runs Prague (the genesis schedules Cancun and Prague at time 0, as geth's would): a
 * contract compiled with solc's default EVM version, using transient storage and MCOPY, deploys
 * and runs.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeAccount, fromHex, rlpDecode, toHex, verifyProof } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import { killAll, type RoleProcess, until } from '@monsoon/test-utils';
import { AccountSet, DEFAULT_TOKEN_ADDRESS, tokenBalanceSlot, writeGenesisFile } from '@monsoon/workload';
import { Contract, ContractFactory, JsonRpcProvider, Wallet } from 'ethers';
import { createPublicClient, createWalletClient, defineChain, http, parseAbi, webSocket } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { rpcUrlOf, type StorageAndMiner, spawnClient, startStorageAndMiner } from '../helpers/cluster.js';

const CHAIN_ID = 1337;
const ERC20 = [
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address who) view returns (uint256)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
] as const;
const hex = (b: Uint8Array) => `0x${toHex(b)}` as `0x${string}`;
const token = hex(DEFAULT_TOKEN_ADDRESS);
const abi = parseAbi(ERC20);
const chain = defineChain({
  id: CHAIN_ID,
  name: 'monsoon',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1'] } },
});

let dir: string;
let accounts: AccountSet;
let rpc: string;
let provider: JsonRpcProvider;
let clientProc: RoleProcess;
let cluster: StorageAndMiner;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'monsoon-client-'));
  accounts = await AccountSet.create({ seed: new TextEncoder().encode('dapp test'), count: 40, eager: true });
  const genesis = join(dir, 'genesis.json');
  await writeGenesisFile(genesis, accounts, { chainId: BigInt(CHAIN_ID) });
  // Cancun and Prague from the start, with the blob schedule geth requires of them.
  const doc = JSON.parse(await readFile(genesis, 'utf8'));
  const blobs = (target: number, max: number, baseFeeUpdateFraction: number) => ({
    target,
    max,
    baseFeeUpdateFraction,
  });
  doc.config = {
    ...doc.config,
    cancunTime: 0,
    pragueTime: 0,
    blobSchedule: { cancun: blobs(3, 6, 3338477), prague: blobs(6, 9, 5007716) },
  };
  await writeFile(genesis, JSON.stringify(doc));
  cluster = await startStorageAndMiner(dir, genesis);
  // From genesis: the events test reads logs back from block 0, which a client that started at
  // the miner's head (the default) answers "pruned history unavailable", as a pruned geth does.
  clientProc = spawnClient(cluster, cluster.minerAddress, ['--sync-from', 'genesis']);
  rpc = await rpcUrlOf(clientProc);
  provider = // No request cache: ethers answers a repeated identical call from the last 250 ms without asking.
    provider = new JsonRpcProvider(rpc, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 100;
}, 60_000);

afterAll(async () => {
  for (const l of clientProc?.lines ?? []) if (Number(l.level) >= 40) console.log(JSON.stringify(l));
  provider?.destroy();
  await killAll();
  await rm(dir, { recursive: true, force: true });
});

const wallet = (i: number) => new Wallet(hex(accounts.privateKey(i)), provider);
const addr = (i: number) => hex(accounts.address(i));

describe('ethers v6', () => {
  it('sends ether and a token transfer, waits for receipts, reads balances with eth_call', async () => {
    const from = wallet(1);
    const before = await provider.getBalance(addr(2));
    const sent = await from.sendTransaction({ to: addr(2), value: 12345n });
    const receipt = await sent.wait();
    expect(receipt?.status).toBe(1);
    expect(await provider.getBalance(addr(2))).toBe(before + 12345n);
    expect(await provider.getTransactionCount(addr(1))).toBe(1);

    const erc20 = new Contract(token, [...ERC20], from);
    const tokensBefore = (await erc20.getFunction('balanceOf')(addr(3))) as bigint;
    const tx = await erc20.getFunction('transfer')(addr(3), 777n);
    const r = await tx.wait();
    expect(r.status).toBe(1);
    const transfer = erc20.interface.parseLog(r.logs[0]);
    expect(transfer?.name).toBe('Transfer');
    expect(String(transfer?.args[1]).toLowerCase()).toBe(addr(3));
    expect(await erc20.getFunction('balanceOf')(addr(3))).toBe(tokensBefore + 777n);
  });

  it("surfaces a revert's reason from eth_call and eth_estimateGas", async () => {
    const erc20 = new Contract(token, [...ERC20], wallet(4));
    await expect(erc20.getFunction('transfer').staticCall(addr(5), 10n ** 40n)).rejects.toMatchObject({
      code: 'CALL_EXCEPTION',
    });
    const est = await erc20.getFunction('transfer').estimateGas(addr(5), 1n);
    expect(est).toBeGreaterThan(21_000n);
    expect(est).toBeLessThan(100_000n);
  });

  it("eth_getProof checks against the block's state root", async () => {
    const block = await provider.getBlock('latest');
    const slot = tokenBalanceSlot(accounts.address(3));
    const p = await provider.send('eth_getProof', [addr(3), [], hex(fromHex(block!.hash!))]);
    const stateRoot = fromHex(block!.stateRoot!);
    const leaf = verifyProof(stateRoot, keccak.keccak256(accounts.address(3)), p.accountProof.map(fromHex));
    expect(decodeAccount(leaf!).balance).toBe(BigInt(p.balance));
    const tp = await provider.send('eth_getProof', [token, [hex(slot)], hex(fromHex(block!.hash!))]);
    const tokenLeaf = decodeAccount(
      verifyProof(stateRoot, keccak.keccak256(DEFAULT_TOKEN_ADDRESS), tp.accountProof.map(fromHex))!,
    );
    const value = verifyProof(
      tokenLeaf.storageRoot,
      keccak.keccak256(slot),
      tp.storageProof[0].proof.map(fromHex),
    );
    expect(BigInt(hex(rlpDecode(value!) as Uint8Array))).toBe(BigInt(tp.storageProof[0].value));
  });
});

describe('viem', () => {
  it('sends ether and a token transfer, waits for receipts, reads balances', async () => {
    const transport = http(rpc);
    const pub = createPublicClient({ chain, transport, pollingInterval: 100 });
    const account = privateKeyToAccount(hex(accounts.privateKey(6)));
    const wallet = createWalletClient({ account, chain, transport });
    const before = await pub.getBalance({ address: addr(7) });
    const h1 = await wallet.sendTransaction({ to: addr(7), value: 999n });
    expect((await pub.waitForTransactionReceipt({ hash: h1 })).status).toBe('success');
    expect(await pub.getBalance({ address: addr(7) })).toBe(before + 999n);

    const tokensBefore = await pub.readContract({
      address: token,
      abi,
      functionName: 'balanceOf',
      args: [addr(8)],
    });
    const h2 = await wallet.writeContract({
      address: token,
      abi,
      functionName: 'transfer',
      args: [addr(8), 4242n],
    });
    const r2 = await pub.waitForTransactionReceipt({ hash: h2 });
    expect(r2.status).toBe('success');
    expect(r2.logs).toHaveLength(1);
    expect(await pub.readContract({ address: token, abi, functionName: 'balanceOf', args: [addr(8)] })).toBe(
      tokensBefore + 4242n,
    );
    const proof = await pub.getProof({ address: addr(8), storageKeys: [], blockNumber: r2.blockNumber });
    const block = await pub.getBlock({ blockNumber: r2.blockNumber });
    const leaf = verifyProof(
      fromHex(block.stateRoot),
      keccak.keccak256(accounts.address(8)),
      proof.accountProof.map(fromHex),
    );
    expect(decodeAccount(leaf!).nonce).toBe(BigInt(proof.nonce));
  });
});

describe('certainly-failing transactions are refused by the client', () => {
  async function rawSend(raw: string) {
    const res = await fetch(rpc, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }),
    });
    return (await res.json()) as { error?: { code: number; message: string }; result?: string };
  }
  const base = {
    to: '0x0000000000000000000000000000000000000001',
    gasLimit: 21_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
    chainId: CHAIN_ID,
    type: 2,
  };

  it('nonce too low, insufficient funds, wrong chain id, bad signature', async () => {
    const w = wallet(9);
    const first = await w.sendTransaction({ to: addr(10), value: 1n });
    await first.wait();
    const low = await rawSend(await w.signTransaction({ ...base, nonce: 0, value: 1n }));
    expect(low.error?.code).toBe(-32000);
    expect(low.error?.message).toMatch(/^nonce too low/);

    const poor = await rawSend(await w.signTransaction({ ...base, nonce: 1, value: 10n ** 30n }));
    expect(poor.error?.code).toBe(-32000);
    expect(poor.error?.message).toMatch(/^insufficient funds for gas \* price \+ value/);

    const wrongChain = await rawSend(
      await w.signTransaction({ ...base, nonce: 1, value: 1n, chainId: CHAIN_ID + 1 }),
    );
    expect(wrongChain.error?.code).toBe(-32000);
    expect(wrongChain.error?.message).toMatch(/chain/i);

    const signed = await w.signTransaction({ ...base, nonce: 1, value: 1n });
    const tampered = `${signed.slice(0, -4)}${signed.slice(-4) === '0000' ? '0001' : '0000'}`;
    const badSig = await rawSend(tampered);
    expect(badSig.error?.code).toBe(-32000);
    // The sender's next nonce is untouched: none of them reached a miner.
    expect(await provider.getTransactionCount(addr(9), 'pending')).toBe(1);
  });
});

describe('a miner that is down', () => {
  it('is passed over: a client whose first miner is unreachable follows and submits through the next', async () => {
    // Port 1 on 127.0.0.1: nothing listens there.
    const proc = spawnClient(cluster, `127.0.0.1:1,${cluster.minerAddress}`);
    const url = await rpcUrlOf(proc);
    const p = new JsonRpcProvider(url, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
    p.pollingInterval = 100;
    try {
      const w = new Wallet(hex(accounts.privateKey(11)), p);
      const r = await (await w.sendTransaction({ to: addr(12), value: 5n })).wait();
      expect(r?.status).toBe(1);
      expect(await p.getTransactionCount(addr(11))).toBe(1);
    } finally {
      p.destroy();
      proc.signal('SIGTERM');
      await proc.exited;
    }
  });
});

describe('events', () => {
  it('are heard by viem over HTTP and WebSocket and by ethers, and read back with getLogs', async () => {
    const ws = rpc.replace('http://', 'ws://');
    expect(clientProc.lines.find((l) => l.msg === 'listening')?.ws).toBe(ws);
    const to = addr(21);
    const pub = createPublicClient({ chain, transport: http(rpc), pollingInterval: 100 });
    const wsPub = createPublicClient({ chain, transport: webSocket(ws) });
    const heard = { http: [] as bigint[], ws: [] as bigint[], ethers: [] as bigint[] };
    const errors: unknown[] = [];
    const watch = (client: typeof pub | typeof wsPub, into: bigint[]) =>
      client.watchContractEvent({
        address: token,
        abi,
        eventName: 'Transfer',
        args: { to },
        onLogs: (logs) => into.push(...logs.map((l) => l.args.value!)),
        onError: (e) => errors.push(e),
      });
    const unwatch = [watch(pub, heard.http), watch(wsPub, heard.ws)];
    const erc20 = new Contract(token, [...ERC20], wallet(20));
    await erc20.on('Transfer', (_from: string, dest: string, value: bigint) => {
      if (dest.toLowerCase() === to) heard.ethers.push(value);
    });
    const sent: bigint[] = [];
    try {
      // The watchers start on their own schedule: transfer until each has heard one.
      for (let i = 1n; i <= 20n && Object.values(heard).some((h) => h.length === 0); i++) {
        const tx = await erc20.getFunction('transfer')(to, 100n + i);
        expect((await tx.wait()).status).toBe(1);
        sent.push(100n + i);
      }
      const last = sent.at(-1)!;
      for (const [name, h] of Object.entries(heard)) {
        // What each heard is what was sent, in order, ending with the last transfer (once mined, all see it).
        await until(() => h.at(-1) === last, { what: `${name} to hear ${last}`, timeoutMs: 20_000 });
        expect(sent.slice(sent.length - h.length)).toEqual(h);
      }
      expect(errors).toEqual([]);
    } finally {
      for (const u of unwatch) u();
      await erc20.removeAllListeners();
      await (await wsPub.transport.getRpcClient()).close();
    }

    const logs = await pub.getLogs({ address: token, event: abi[2], args: { to }, fromBlock: 0n });
    expect(logs.map((l) => l.args.value)).toEqual(sent);
    const events = await pub.getContractEvents({
      address: token,
      abi,
      eventName: 'Transfer',
      args: { to },
      fromBlock: 0n,
    });
    expect(events.map((e) => [e.args.from?.toLowerCase(), e.args.value])).toEqual(
      sent.map((v) => [addr(20), v]),
    );
    const receipts = await provider.send('eth_getBlockReceipts', [logs[0]!.blockHash]);
    expect(
      receipts.some((r: { transactionHash: string }) => r.transactionHash === logs[0]!.transactionHash),
    ).toBe(true);
  });

  it('eth_createAccessList gives the list and the gas an EIP-2930 transfer then uses', async () => {
    const from = wallet(22);
    const data = new Contract(token, [...ERC20]).interface.encodeFunctionData('transfer', [addr(23), 5n]);
    const r = (await provider.send('eth_createAccessList', [{ from: addr(22), to: token, data }])) as {
      accessList: { address: string; storageKeys: string[] }[];
      gasUsed: string;
    };
    expect(r.accessList.map((e) => [e.address, e.storageKeys.length])).toEqual([[token, 2]]);
    const tx = await from.sendTransaction({
      type: 1,
      to: token,
      data,
      accessList: r.accessList,
      gasLimit: 200_000n,
    });
    const receipt = await tx.wait();
    expect(receipt?.status).toBe(1);
    expect(receipt?.gasUsed).toBe(BigInt(r.gasUsed));
  });
});

/** Compiles one contract with the npm `solc` at its default EVM version (what a dapp developer gets). */
function compileDefault(source: string, name: string) {
  const solc = createRequire(import.meta.url)('solc');
  const input = {
    language: 'Solidity',
    sources: { 'Probe.sol': { content: source } },
    settings: {
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.opcodes'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e: { message: string }) => e.message).join('\n'));
  const c = out.contracts['Probe.sol'][name];
  return {
    abi: c.abi,
    bytecode: `0x${c.evm.bytecode.object}`,
    opcodes: String(c.evm.deployedBytecode.opcodes),
  };
}

describe("today's solc", () => {
  it("a contract compiled for solc's default EVM version (TSTORE, TLOAD, MCOPY) deploys and runs", async () => {
    const {
      abi: probeAbi,
      bytecode,
      opcodes,
    } = compileDefault(
      `// SPDX-License-Identifier: MIT
      pragma solidity ^0.8.28;
      contract Probe {
        uint256 private transient calls;
        bytes public last;
        function store(bytes calldata data) public returns (uint256) {
          bytes memory copy = data;
          last = bytes.concat(copy, copy);
          calls += 1;
          return calls;
        }
        function storeTwice(bytes calldata data) external returns (uint256) {
          this.store(data);
          return this.store(data);
        }
      }`,
      'Probe',
    );
    // What makes it need Cancun: a Shanghai chain answers these with "invalid opcode".
    expect(opcodes).toMatch(/\bTSTORE\b/);
    expect(opcodes).toMatch(/\bTLOAD\b/);
    expect(opcodes).toMatch(/\bMCOPY\b/);
    const factory = new ContractFactory(probeAbi, bytecode, wallet(30));
    const probe = await factory.deploy();
    await probe.waitForDeployment();
    const payload = '0x0102030405';
    // Two calls in one transaction: the transient counter reaches 2, then starts over at 0.
    expect(await probe.getFunction('storeTwice').staticCall(payload)).toBe(2n);
    const r = await (await probe.getFunction('storeTwice')(payload)).wait();
    expect(r.status).toBe(1);
    expect(await probe.getFunction('last')()).toBe('0x01020304050102030405');
    expect(await probe.getFunction('store').staticCall(payload)).toBe(1n);
  });
});

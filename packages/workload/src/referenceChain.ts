/**
 * The conventional way to process a chain, for comparison: one process executing transactions
 * with @ethereumjs/vm over @ethereumjs/statemanager's MerkleStateManager (an @ethereumjs/mpt trie:
 * every state access goes through the hash-keyed trie). Tests check Monsoon's roots against it;
 * the end-to-end benchmark measures it as the baseline. Its best configuration is the default:
 * native keccak and secp256k1 through ethereumjs' customCrypto, the state manager's caches on.
 * With `disk` it is the conventional node as operators run it: trie nodes in LevelDB (classic-level)
 * behind a node cache smaller than the state (RainBlock §2, Fig. 6: the I/O bottleneck).
 */
import type { Common } from '@ethereumjs/common';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { Caches, MerkleStateManager } from '@ethereumjs/statemanager';
import { createTxFromRLP } from '@ethereumjs/tx';
import { Address, createAccount, ValueEncoding } from '@ethereumjs/util';
import { createVM, runTx, type VM } from '@ethereumjs/vm';
import { blockOf, type ChainRules, chainRulesOf, makeCommon, nativeCustomCrypto } from '@monsoon/execution';
import { keccak } from '@monsoon/keccak';
import type { Genesis } from '@monsoon/protocol';
import type { LevelTrieDb } from './levelTrieDb.js';

export interface ReferenceChainOptions {
  /** Native keccak and ecrecover through customCrypto (default true); false: ethereumjs' JS crypto. */
  readonly nativeCrypto: boolean;
  /** The state manager's account/storage/code caches (default true). */
  readonly caches: boolean;
  /** The chain's rules, its fork among them (default: what the genesis gives, see chainRulesOf). */
  readonly rules: ChainRules;
  /**
   * Trie nodes in this LevelDB instead of a Map, behind an LRU of `cacheNodes` decoded nodes (the
   * trie's own cache; LevelDB adds its block cache). Absent: the whole trie in memory (the default).
   */
  readonly disk?: { readonly db: LevelTrieDb; readonly cacheNodes: number };
}

/** A block for {@link ReferenceChain.runBlock}: what the header says about the environment. */
export interface ReferenceBlockEnv {
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly coinbase: Uint8Array;
  readonly gasLimit: bigint;
}

export interface ReferenceBlockResult {
  readonly stateRoot: Uint8Array;
  readonly gasUsed: bigint;
  /** Per transaction: its receipt status (1 success, 0 reverted), or 'refused' if it could not be included. */
  readonly outcomes: readonly (0 | 1 | 'refused')[];
}

export class ReferenceChain {
  private constructor(
    readonly vm: VM,
    readonly common: Common,
    private readonly rules: ChainRules,
  ) {}

  /** A chain at `genesis`, its whole state written into the trie. */
  static async create(genesis: Genesis, opts: Partial<ReferenceChainOptions> = {}): Promise<ReferenceChain> {
    const o = {
      nativeCrypto: true,
      caches: true,
      rules: chainRulesOf(genesis),
      ...opts,
    };
    const common = makeCommon(o.rules, o.nativeCrypto ? nativeCustomCrypto : undefined);
    const trie = new MerklePatriciaTrie({
      useKeyHashing: true,
      ...(o.nativeCrypto ? { useKeyHashingFunction: keccak.keccak256 } : {}),
      ...(o.disk === undefined
        ? {}
        : { db: o.disk.db, valueEncoding: ValueEncoding.Bytes, cacheSize: o.disk.cacheNodes }),
      common,
    });
    const stateManager = new MerkleStateManager({
      common,
      trie,
      ...(o.caches ? { caches: new Caches() } : {}),
    });
    // One trie checkpoint around the genesis: its nodes reach the trie's db in one batch.
    trie.checkpoint();
    for (const a of genesis.alloc) {
      const address = new Address(a.address);
      await stateManager.putAccount(address, createAccount({ nonce: a.nonce, balance: a.balance }));
      if (a.code.length > 0) await stateManager.putCode(address, a.code);
      for (const [slot, value] of a.storage) await stateManager.putStorage(address, slot, value);
    }
    await stateManager.flush();
    await trie.commit();
    const vm = await createVM({ common, stateManager });
    return new ReferenceChain(vm, common, o.rules);
  }

  async stateRoot(): Promise<Uint8Array> {
    return this.vm.stateManager.getStateRoot();
  }

  /**
   * Runs signed transactions as one block, then pays the block reward: what a miner producing
   * that block must have computed. A transaction ethereumjs refuses is left out and reported.
   * `onTx` hears each transaction's wall time (decoding, sender recovery and execution).
   */
  async runBlock(
    env: ReferenceBlockEnv,
    raws: readonly Uint8Array[],
    onTx?: (raw: Uint8Array, ms: number) => void,
  ): Promise<ReferenceBlockResult> {
    const block = blockOf(env, this.rules, this.common);
    const outcomes: (0 | 1 | 'refused')[] = [];
    let gasUsed = 0n;
    for (const raw of raws) {
      const t0 = performance.now();
      try {
        const tx = createTxFromRLP(raw, { common: this.common });
        const res = await runTx(this.vm, { tx, block, blockGasUsed: gasUsed, skipHardForkValidation: true });
        gasUsed += res.totalGasSpent;
        outcomes.push((res.receipt as { status: 0 | 1 }).status);
      } catch {
        outcomes.push('refused');
      }
      onTx?.(raw, performance.now() - t0);
    }
    const sm = this.vm.stateManager;
    const cb = new Address(env.coinbase);
    const miner = (await sm.getAccount(cb)) ?? createAccount({});
    miner.balance += this.rules.blockReward;
    await sm.putAccount(cb, miner);
    return { stateRoot: await sm.getStateRoot(), gasUsed, outcomes };
  }
}

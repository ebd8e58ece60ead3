/**
 * A reference chain for tests: one full StateTree holding every account (what a miner computes),
 * turning random changes into blocks — a header and per-shard logical updates with every
 * shard's expected root — exactly as a storage node receives them.
 */
import { EMPTY_CODE_HASH, EMPTY_ROOT, makeAccount, StateTree } from '@monsoon/dsm-tree';
import { keccak } from '@monsoon/keccak';
import {
  type AccountUpdate,
  type ApplyBlockRequest,
  type BlockHeader,
  encodeHeader,
  type Genesis,
  type GenesisAccount,
  genesisHeader,
  headerHash,
  type ShardUpdate,
  sealPow,
} from '@monsoon/protocol';
import { ShardLayout } from '@monsoon/storage-node';
import { Prng } from '@monsoon/test-utils';

export function makeGenesis(seed: number, accounts: number): Genesis {
  const r = new Prng(seed);
  const alloc: GenesisAccount[] = [];
  for (let i = 0; i < accounts; i++) {
    const storage: [Uint8Array, Uint8Array][] = [];
    if (i % 7 === 0)
      for (let k = 0; k < 3; k++) storage.push([r.bytes(32), Uint8Array.of(1 + r.int(200), r.int(256))]);
    alloc.push({
      address: r.bytes(20),
      nonce: BigInt(r.int(5)),
      balance: BigInt(r.u32()) * 1_000_000_007n,
      code: i % 11 === 0 ? r.bytes(1 + r.int(60)) : new Uint8Array(0),
      storage,
    });
  }
  return {
    chainId: 1337n,
    difficulty: 0n,
    gasLimit: 30_000_000n,
    timestamp: 1_700_000_000n,
    extraData: new Uint8Array(0),
    coinbase: new Uint8Array(20),
    nonce: new Uint8Array(8),
    // The reference chain's blocks need no work unless a test asks for some.
    minDifficulty: 0n,
    alloc,
  };
}

export interface Block {
  req: ApplyBlockRequest;
  header: BlockHeader;
  hash: Uint8Array;
  /** The full state after the block. */
  state: StateTree;
}

export class RefChain {
  readonly layout: ShardLayout;
  readonly genesisHash: Uint8Array;
  readonly genesisState: StateTree;
  private readonly addresses: Uint8Array[];

  constructor(
    readonly genesis: Genesis,
    shardCount: 16 | 256,
  ) {
    this.layout = new ShardLayout(shardCount);
    const st = new StateTree();
    for (const a of genesis.alloc) {
      const codeHash = a.code.length ? st.putCode(a.code) : EMPTY_CODE_HASH;
      st.putAccount(a.address, makeAccount({ nonce: a.nonce, balance: a.balance, codeHash }));
      for (const [s, v] of a.storage) st.putStorage(a.address, s, v);
    }
    this.genesisState = st;
    this.genesisHash = headerHash(genesisHeader(genesis, st.root()));
    this.addresses = genesis.alloc.map((a) => a.address);
  }

  shardOf(address: Uint8Array): number {
    return this.layout.shardOfKey(keccak.keccak256(address));
  }

  /** Every shard's root in a full state. */
  shardRoots(st: StateTree): { shard: number; root: Uint8Array }[] {
    st.rootBin();
    return this.layout.all().map((shard) => ({
      shard,
      root: st.accounts.refAt(this.layout.path(shard)) ?? new Uint8Array(0),
    }));
  }

  /**
   * A block on top of (parentHash, parentState, number - 1) with `changes` random account
   * changes (new balances and nonces, new accounts, storage writes, a few deletions).
   */
  block(
    parent: { hash: Uint8Array; state: StateTree; number: bigint },
    seed: number,
    changes: number,
    opts: { difficulty?: bigint; timestamp?: bigint } = {},
  ): Block {
    const r = new Prng(seed);
    const st = parent.state.snapshot();
    const byShard = new Map<number, AccountUpdate[]>();
    const touched = new Set<string>();
    for (let i = 0; i < changes; i++) {
      const fresh = r.int(10) === 0;
      const address = fresh ? r.bytes(20) : this.addresses[r.int(this.addresses.length)]!;
      const id = Buffer.from(address).toString('hex');
      if (touched.has(id)) continue;
      touched.add(id);
      if (fresh) this.addresses.push(address);
      let update: AccountUpdate;
      const existing = st.getAccount(address);
      if (existing !== undefined && r.int(25) === 0) {
        st.deleteAccount(address);
        update = { deleted: true, address };
      } else {
        const nonce = (existing?.nonce ?? 0n) + 1n;
        const balance = BigInt(r.u32()) * 3n;
        const code = existing === undefined && r.int(4) === 0 ? r.bytes(1 + r.int(40)) : undefined;
        const codeHash = code ? st.putCode(code) : (existing?.codeHash ?? EMPTY_CODE_HASH);
        st.putAccount(address, makeAccount({ nonce, balance, codeHash }));
        const storage = [];
        if (r.int(3) === 0) {
          for (let k = 0; k < 1 + r.int(3); k++) {
            const slot = r.bytes(32);
            const value = r.int(5) === 0 ? new Uint8Array(0) : Uint8Array.of(1 + r.int(255), r.int(256));
            st.putStorage(address, slot, value);
            storage.push({ slot, value });
          }
        }
        update = { deleted: false, address, nonce, balance, code, clearStorage: false, storage };
      }
      const s = this.shardOf(address);
      if (!byShard.has(s)) byShard.set(s, []);
      byShard.get(s)!.push(update);
    }
    const header: BlockHeader = {
      parentHash: parent.hash,
      miner: new Uint8Array(20).fill(0x11),
      stateRoot: st.root(),
      transactionsRoot: EMPTY_ROOT,
      receiptsRoot: EMPTY_ROOT,
      difficulty: opts.difficulty ?? 0n,
      number: parent.number + 1n,
      gasLimit: 30_000_000n,
      gasUsed: 0n,
      timestamp: opts.timestamp ?? 1_700_000_000n + parent.number + 1n,
      extraData: new Uint8Array(0),
      nonce: new Uint8Array(8),
    };
    const sealed = sealPow(header, { maxTries: 1_000_000 })!;
    const shards: ShardUpdate[] = [...byShard].map(([shard, accounts]) => ({ shard, accounts }));
    return {
      req: { headerRlp: encodeHeader(sealed), shards, expectedRoots: this.shardRoots(st) },
      header: sealed,
      hash: headerHash(sealed),
      state: st,
    };
  }

  /** The part of a block a node holding `owned` receives. */
  static forShards(req: ApplyBlockRequest, owned: ReadonlySet<number>): ApplyBlockRequest {
    return { ...req, shards: req.shards.filter((u) => owned.has(u.shard)) };
  }
}

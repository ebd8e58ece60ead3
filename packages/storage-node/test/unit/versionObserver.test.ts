/**
 * The node-store seam: an observer that keeps a content-addressed map from `start` and `adding`
 * alone must be able to serve every held version (a tree over it reads the same accounts and
 * proofs as the node), on two forks; `dropped` names exactly the versions the store no longer
 * holds; a rejecting observer refuses the block and no version appears.
 */
import { describe, expect, it } from '@jest/globals';
import { StateTree, toHex } from '@monsoon/dsm-tree';
import { atHash } from '@monsoon/protocol';
import { type FreshNode, StorageNode, type Version, type VersionObserver } from '@monsoon/storage-node';
import { makeGenesis, RefChain } from '../helpers/chain.js';

class MapStore implements VersionObserver {
  readonly nodes = new Map<string, string>();
  readonly gone: string[] = [];
  started = 0;
  refuse = false;
  start(v: Version): void {
    this.started++;
    v.state.state.forEachNode((h, enc) => this.nodes.set(h, enc));
  }
  adding(_v: Version, fresh: readonly FreshNode[]): void {
    if (this.refuse) throw new Error('store unavailable');
    for (const n of fresh) this.nodes.set(n.hash, n.enc);
  }
  dropped(gone: readonly Version[]): void {
    for (const v of gone) this.gone.push(v.id);
  }
  async close(): Promise<void> {}
  resolver = (h: Uint8Array): Uint8Array | undefined => {
    const e = this.nodes.get(Buffer.from(h).toString('latin1'));
    return e === undefined ? undefined : new Uint8Array(Buffer.from(e, 'latin1'));
  };
}

describe('VersionObserver', () => {
  const genesis = makeGenesis(21, 400);
  const chain = new RefChain(genesis, 16);
  const mine = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

  it('start + adding give a store that serves every held version, on two forks; dropped names pruned versions', async () => {
    const store = new MapStore();
    const node = StorageNode.fromGenesis(genesis, { window: 6, forkWindow: 2 }, { observers: [store] });
    await node.startObservers();
    expect(store.started).toBe(1);
    const g = { hash: chain.genesisHash, state: chain.genesisState, number: 0n };
    const held: { hash: Uint8Array; state: StateTree }[] = [];
    for (const fork of [1, 2]) {
      let parent = g;
      for (let i = 1; i <= 5; i++) {
        const b = chain.block(parent, 100 * fork + i, 40, { difficulty: fork === 1 ? 1n : 10n });
        await node.applyBlock(RefChain.forShards(b.req, mine));
        held.push({ hash: b.hash, state: b.state });
        parent = { hash: b.hash, state: b.state, number: BigInt(i) };
      }
    }
    expect(store.started).toBe(1);
    const ids = new Set(node.versions.all().map((v) => v.id));
    expect(store.gone.length).toBeGreaterThan(0);
    for (const id of store.gone) expect(ids.has(id)).toBe(false);
    let checked = 0;
    for (const h of held) {
      if (!ids.has(toHex(h.hash))) continue;
      const v = node.version(atHash(h.hash));
      const remote = StateTree.fromRootHash(v.header.stateRoot, { resolver: store.resolver });
      for (const a of genesis.alloc.filter((_, i) => i % 5 === 0)) {
        expect(remote.getAccount(a.address)).toEqual(h.state.getAccount(a.address));
        expect(remote.proveAccount(a.address)).toEqual(h.state.proveAccount(a.address));
        for (const [slot] of a.storage)
          expect(remote.getStorage(a.address, slot)).toEqual(h.state.getStorage(a.address, slot));
      }
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(4);
  });

  it('a rejecting observer refuses the block: no version appears', async () => {
    const store = new MapStore();
    const node = StorageNode.fromGenesis(genesis, {}, { observers: [store] });
    const b = chain.block({ hash: chain.genesisHash, state: chain.genesisState, number: 0n }, 9, 20);
    store.refuse = true;
    await expect(node.applyBlock(RefChain.forShards(b.req, mine))).rejects.toThrow('store unavailable');
    expect(node.versions.byHash(b.hash)).toBeUndefined();
    expect(node.head.header.number).toBe(0n);
    store.refuse = false;
    await node.applyBlock(RefChain.forShards(b.req, mine));
    expect(node.head.header.number).toBe(1n);
  });
});

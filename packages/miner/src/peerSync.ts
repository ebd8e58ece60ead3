/**
 * Blocks from peer miners, with their missing ancestors fetched. A block whose parent this miner
 * does not hold (it was down, partitioned, or started late) is kept aside and the peer that sent
 * it is asked for the parent and its ancestors (GetBlocks, by hash, at most `fetchBlocks` at a
 * time); they come back oldest first, and each adopted block releases the blocks waiting on it.
 * Bounded: at most `maxOrphans` blocks wait, and a request asks for at most `fetchBlocks`.
 */
import { toHex } from '@monsoon/dsm-tree';
import type { Logger } from '@monsoon/edge';
import { keccak } from '@monsoon/keccak';
import {
  type BlockHeader,
  decodeHeader,
  headerHash,
  type PeerBlock,
  type PeerMessage,
} from '@monsoon/protocol';
import { type ChainBlock, type Miner, peerBlockOf, type SealedBlock } from './miner.js';

export interface PeerSyncOptions {
  /** Most blocks asked for (and sent) in one GetBlocks. */
  fetchBlocks: number;
  /** Most peer blocks kept waiting for their parents. */
  maxOrphans: number;
}

export const defaultPeerSyncOptions: PeerSyncOptions = { fetchBlocks: 64, maxOrphans: 256 };

/** A peer as the sync sees it: a name for logs, and a way to send it a message. */
export interface PeerLink {
  readonly who: string;
  send(m: PeerMessage): void;
}

export interface PeerSyncModules<L extends PeerLink> {
  miner: Miner;
  log: Logger;
  /** A peer block the miner adopted (to be sent on to everyone but `from`). */
  adopted: (sealed: SealedBlock, from: L) => void;
}

interface Orphan<L> {
  readonly block: PeerBlock;
  readonly hash: string;
  readonly from: L;
}

export class PeerSync<L extends PeerLink> {
  readonly counters = { fetched: 0, orphansDropped: 0 };
  /** Blocks waiting for their parent, by the parent's hash. */
  private readonly orphans = new Map<string, Orphan<L>[]>();
  private readonly orphanHashes = new Set<string>();
  /** Blocks handed to the miner and not yet adopted or refused. */
  private readonly inFlight = new Set<string>();

  constructor(
    readonly opts: PeerSyncOptions,
    private readonly modules: PeerSyncModules<L>,
  ) {}

  /** Peer blocks waiting for their parents. */
  get waiting(): number {
    return this.orphanHashes.size;
  }

  /** A block a peer sent: re-executed when its parent is held (or on its way), else kept aside while its ancestors are fetched. */
  receive(block: PeerBlock, from: L): void {
    const { miner, log } = this.modules;
    let header: BlockHeader;
    let hashBytes: Uint8Array;
    try {
      header = decodeHeader(block.headerRlp);
      hashBytes = headerHash(header, keccak);
    } catch (e) {
      log.warn('peer block refused', { peer: from.who, error: (e as Error).message });
      return;
    }
    const hash = toHex(hashBytes);
    const parent = toHex(header.parentHash);
    if (this.inFlight.has(hash) || this.orphanHashes.has(hash) || miner.block(hashBytes) !== undefined)
      return;
    if (miner.block(header.parentHash) === undefined && !this.inFlight.has(parent)) {
      this.keepAside({ block, hash, from }, parent, header.parentHash);
      return;
    }
    this.inFlight.add(hash);
    miner.receiveBlock(block).then(
      (sealed) => {
        this.inFlight.delete(hash);
        if (sealed !== undefined) {
          log.info('peer block adopted', {
            peer: from.who,
            number: Number(sealed.block.header.number),
            head: toHex(miner.head.hash),
          });
          this.modules.adopted(sealed, from);
        }
        this.release(hash);
      },
      (e) => {
        this.inFlight.delete(hash);
        this.dropWaitingOn(hash);
        log.warn('peer block refused', { peer: from.who, error: (e as Error).message });
      },
    );
  }

  /** A peer asked for `count` blocks down from `hash`: those held, oldest first. */
  answer(hash: Uint8Array, count: number, to: L): void {
    const out: ChainBlock[] = [];
    const n = Math.min(count, this.opts.fetchBlocks);
    for (let b = this.modules.miner.block(hash); b !== undefined && out.length < n; b = b.parent) {
      if (b.header.number === 0n) break; // every miner starts from the same genesis
      out.push(b);
    }
    for (const b of out.reverse()) {
      to.send({
        kind: 'block',
        block: peerBlockOf(b),
      });
    }
  }

  private keepAside(o: Orphan<L>, parent: string, parentHash: Uint8Array): void {
    if (this.orphanHashes.size >= this.opts.maxOrphans) {
      // The longest-waiting give way: their ancestors may never come (no peer holds them).
      const [oldest, list] = this.orphans.entries().next().value as [string, Orphan<L>[]];
      this.orphans.delete(oldest);
      for (const x of list) {
        this.orphanHashes.delete(x.hash);
        this.dropWaitingOn(x.hash);
      }
      this.counters.orphansDropped += list.length;
      this.modules.log.warn('peer blocks dropped: too many wait for their parents', {
        peer: o.from.who,
        parent: oldest,
        dropped: list.length,
      });
    }
    const list = this.orphans.get(parent);
    if (list === undefined) this.orphans.set(parent, [o]);
    else list.push(o);
    this.orphanHashes.add(o.hash);
    // The parent is itself waiting: its own request is out already.
    if (this.orphanHashes.has(parent)) return;
    this.counters.fetched++;
    this.modules.log.info('fetching the ancestors of a peer block', {
      peer: o.from.who,
      parent,
      count: this.opts.fetchBlocks,
    });
    o.from.send({ kind: 'getBlocks', hash: parentHash, count: this.opts.fetchBlocks });
  }

  /** `hash` was adopted (or was already held): the blocks waiting on it go to the miner. */
  private release(hash: string): void {
    const list = this.orphans.get(hash);
    if (list === undefined) return;
    this.orphans.delete(hash);
    for (const o of list) {
      this.orphanHashes.delete(o.hash);
      this.receive(o.block, o.from);
    }
  }

  /** `hash` was refused: nothing waiting on it can ever be adopted. */
  private dropWaitingOn(hash: string): void {
    const list = this.orphans.get(hash);
    if (list === undefined) return;
    this.orphans.delete(hash);
    this.counters.orphansDropped += list.length;
    for (const o of list) {
      this.orphanHashes.delete(o.hash);
      this.dropWaitingOn(o.hash);
    }
  }
}

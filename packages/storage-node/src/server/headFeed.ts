/**
 * The node's head as a feed: whoever applies a block calls `check()` afterwards, and every
 * subscriber hears the new head once. No polling: the head only moves when a block is applied,
 * and every block the server applies passes through here.
 */
import type { Head } from '@monsoon/protocol';
import type { StorageNode } from '../storageNode.js';
import type { Version } from '../versionStore.js';

export type HeadListener = (head: Head) => void;

/** A version as SubscribeHeads sends it. */
export function headOf(v: Version): Head {
  return { hash: v.hash, number: v.header.number, headerRlp: v.headerRlp, stateRoot: v.header.stateRoot };
}

export class HeadFeed {
  private readonly listeners = new Set<HeadListener>();
  private lastId: string;

  constructor(private readonly node: StorageNode) {
    this.lastId = node.head.id;
  }

  /** The current head. */
  current(): Head {
    return headOf(this.node.head);
  }

  /** Tells every subscriber about the head if it moved since the last check. */
  check(): void {
    const h = this.node.head;
    if (h.id === this.lastId) return;
    this.lastId = h.id;
    const head = headOf(h);
    for (const l of [...this.listeners]) l(head);
  }

  /** Calls `listener` with each new head; returns the unsubscribe function. */
  subscribe(listener: HeadListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}

/**
 * A chain's head as a feed: whoever may have moved the head calls `check()` afterwards, and
 * every subscriber hears each new head once. No polling: the head only moves when a block is
 * applied or adopted, and the role calls `check()` there.
 */
export type HeadListener<H> = (head: H) => void;

export class HeadFeed<H> {
  private readonly listeners = new Set<HeadListener<H>>();
  private lastId: string;

  /**
   * `read` gives the current head, `idOf` what tells two heads apart (a block hash): a head
   * is announced when its id differs from the last one announced.
   */
  constructor(
    private readonly read: () => H,
    private readonly idOf: (head: H) => string,
  ) {
    this.lastId = idOf(read());
  }

  /** The current head. */
  current(): H {
    return this.read();
  }

  /** Tells every subscriber about the head if it moved since the last check. */
  check(): void {
    const head = this.read();
    const id = this.idOf(head);
    if (id === this.lastId) return;
    this.lastId = id;
    for (const l of [...this.listeners]) l(head);
  }

  /** Calls `listener` with each new head; returns the unsubscribe function. */
  subscribe(listener: HeadListener<H>): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}

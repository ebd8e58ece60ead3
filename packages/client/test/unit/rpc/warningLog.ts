/** A Logger for server tests: keeps what it is warned of, and lets a test wait for a warning. */
import type { Logger } from '@monsoon/edge';

export interface Warning {
  readonly msg: string;
  readonly meta?: Record<string, unknown>;
}

export class WarningLog implements Logger {
  readonly warnings: Warning[] = [];
  private waiters: { readonly msg: string; readonly from: number; readonly resolve: (w: Warning) => void }[] =
    [];

  info(): void {}

  error(): void {}

  warn(msg: string, meta?: Record<string, unknown>): void {
    this.warnings.push(meta === undefined ? { msg } : { msg, meta });
    this.waiters = this.waiters.filter((w) => !this.settle(w));
  }

  /** Resolves with the first warning `msg` logged from now on. */
  next(msg: string): Promise<Warning> {
    return new Promise((resolve) => {
      const w = { msg, from: this.warnings.length, resolve };
      if (!this.settle(w)) this.waiters.push(w);
    });
  }

  private settle(w: { msg: string; from: number; resolve: (x: Warning) => void }): boolean {
    const found = this.warnings.slice(w.from).find((x) => x.msg === w.msg);
    if (found !== undefined) w.resolve(found);
    return found !== undefined;
  }
}

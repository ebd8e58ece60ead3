import type { Logger } from '@monsoon/edge';

export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  msg: string;
  meta: Record<string, unknown>;
}

/** A Logger that keeps what it is told, for assertions. */
export class RecordingLogger implements Logger {
  readonly entries: LogEntry[] = [];

  info(msg: string, meta: Record<string, unknown> = {}): void {
    this.entries.push({ level: 'info', msg, meta });
  }

  warn(msg: string, meta: Record<string, unknown> = {}): void {
    this.entries.push({ level: 'warn', msg, meta });
  }

  error(msg: string, meta: Record<string, unknown> = {}): void {
    this.entries.push({ level: 'error', msg, meta });
  }

  get warnings(): LogEntry[] {
    return this.entries.filter((e) => e.level === 'warn');
  }

  get errors(): LogEntry[] {
    return this.entries.filter((e) => e.level === 'error');
  }
}

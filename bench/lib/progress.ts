/**
 * A one-line status for long benchmark phases. It writes only when stdout is a terminal, so
 * CI logs and redirected output get the results and nothing else.
 */
export class Progress {
  private readonly enabled: boolean;
  private shown = false;

  constructor(private readonly stream: NodeJS.WriteStream = process.stdout) {
    this.enabled = stream.isTTY === true;
  }

  /** Replaces the status line (a no-op off a TTY). */
  update(message: string): void {
    if (!this.enabled) return;
    const width = this.stream.columns > 1 ? this.stream.columns - 1 : 79;
    this.stream.write(`\r\x1b[K${message.length > width ? message.slice(0, width) : message}`);
    this.shown = true;
  }

  /** Erases the status line, before printing results. */
  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}

/** Counts refusals per reason, keeping the first few distinct reasons verbatim. */
export class ReasonLog {
  count = 0;
  private readonly reasons = new Map<string, number>();
  private other = 0;

  constructor(private readonly keep: number) {}

  add(reason: string): void {
    this.count++;
    const n = this.reasons.get(reason);
    if (n !== undefined) this.reasons.set(reason, n + 1);
    else if (this.reasons.size < this.keep) this.reasons.set(reason, 1);
    else this.other++;
  }

  /** The kept reasons, most frequent first, then `(other reasons)` if some were not kept. */
  samples(): { reason: string; count: number }[] {
    const out = [...this.reasons].map(([reason, count]) => ({ reason, count }));
    out.sort((a, b) => b.count - a.count);
    if (this.other > 0) out.push({ reason: '(other reasons)', count: this.other });
    return out;
  }
}

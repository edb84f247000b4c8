/**
 * Which subjects a limiter reset, and when (a sequence number): a refund or release of a charge made
 * before its subject's reset gives nothing back, because the reset already took that charge away and
 * giving it back again would lift the subject above its capacity. Bounded: past `maxEntries` subjects
 * the oldest are forgotten, and a charge older than what was forgotten gives nothing back (a refund
 * may give back less than is charged, never more). Resets made by another process are not seen here.
 */
export class ResetLog {
  private seq = 0;
  private readonly resets = new Map<string, number>();
  private forgottenUpTo = 0;

  constructor(private readonly maxEntries = 10_000) {}

  /** The moment a charge is made, to compare with later resets. */
  get moment(): number {
    return this.seq;
  }

  record(subject: string): void {
    this.seq++;
    this.resets.delete(subject);
    if (this.resets.size >= this.maxEntries) {
      const [oldest, at] = this.resets.entries().next().value!;
      this.resets.delete(oldest);
      this.forgottenUpTo = at;
    }
    this.resets.set(subject, this.seq);
  }

  /** Whether `subject` may have been reset after `moment`. */
  resetSince(subject: string, moment: number): boolean {
    if (moment >= this.seq) return false;
    if (moment < this.forgottenUpTo) return true;
    const at = this.resets.get(subject);
    return at !== undefined && at > moment;
  }
}

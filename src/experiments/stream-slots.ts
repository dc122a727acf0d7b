import { ApiError, msg } from "../errors.js";

/** Seconds a refused client is told to wait: streams free their slot when a reader leaves, not on a clock. */
export const STREAM_RETRY_AFTER_S = 30;

/**
 * Open events streams per user, in this process: experiments' and batches' streams together (one instance is shared). The request rate limit counts only the opening request, so
 * one key could hold hundreds of streams open (issue 42, finding 5). Per process, not per cluster: with N API
 * replicas behind a balancer a user may hold up to N times the cap (docs/experiments.md says so). A stream is
 * cheap to count here and would need a lease with expiry in Redis to survive a crashed replica.
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(private readonly perUser: number) {}

  /** Takes a slot or throws 429 too_many_streams; the returned function gives it back (once, however often called). */
  acquire(userId: string): () => void {
    const count = this.open.get(userId) ?? 0;
    if (count >= this.perUser) {
      throw new ApiError(
        429,
        "too_many_streams",
        msg("experiment.too_many_streams", { max: this.perUser }),
        { limit: this.perUser },
        { "retry-after": String(STREAM_RETRY_AFTER_S) },
      );
    }
    this.open.set(userId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(userId) ?? 1) - 1;
      if (left > 0) this.open.set(userId, left);
      else this.open.delete(userId);
    };
  }

  openFor(userId: string): number {
    return this.open.get(userId) ?? 0;
  }
}

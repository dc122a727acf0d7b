/**
 * Remembers API-key lookups so that the hot path of /predict does not ask the database on every request
 * (about 0.5-1 ms of PGlite CPU each). It is only trusted while the database's change notifications are being
 * received (migration 0001: a trigger announces every revocation, limit change or deletion with the key's hash):
 * - a notification drops that key at once, in every server process listening;
 * - while the listener is down (onState(false)) nothing is cached or served from the cache;
 * - a lookup that was already on its way to the database when a notification arrived is not cached (it may
 *   have read the row before the change): each entry records the generation it was read in.
 * The TTL bounds what no notification covers (a user's email shown in /v1/me).
 */
export class ApiKeyCache<T> {
  private readonly entries = new Map<string, { value: T; expires: number }>();
  private generation = 0;
  private live = false;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get enabled(): boolean {
    return this.live && this.ttlMs > 0;
  }

  /** Called by the listener: true once notifications flow, false when some may have been missed. */
  setListening(listening: boolean): void {
    this.live = listening;
    this.clear();
  }

  get(hash: string, now = Date.now()): T | undefined {
    if (!this.enabled) return undefined;
    const hit = this.entries.get(hash);
    if (!hit) return undefined;
    if (hit.expires <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return hit.value;
  }

  /** The generation to pass to put() for a lookup that starts now. */
  begin(): number {
    return this.generation;
  }

  put(hash: string, value: T, generation: number, now = Date.now()): void {
    if (!this.enabled || generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!); // oldest first
    this.entries.set(hash, { value, expires: now + this.ttlMs });
  }

  invalidate(hash: string): void {
    this.generation++;
    this.entries.delete(hash);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

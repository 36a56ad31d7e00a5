/**
 * The breaker's scopes by key: at most `maxEntries`, least recently used first (a `Map` keeps insertion order: a
 * touch is delete + set), swept of the idle and the retirable by one `unref()`ed timer while it holds any. No LRU
 * library: the sweep also retires entries in use that have nothing left to remember, which age alone does not give.
 */
export class ScopeRegistry<T> {
  readonly #slots = new Map<string, { value: T; usedAt: number }>();
  readonly #maxEntries: number;
  readonly #idleTtlInMs: number;
  readonly #isRetirable: (value: T) => boolean;
  readonly #onEvict: (value: T) => void;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Times are `performance.now()`'s; `idleTtlInMs` `Infinity`: no sweep, no timer; `onEvict` hears of every entry forgotten by the bound or the sweep. */
  constructor(maxEntries: number, idleTtlInMs: number, isRetirable: (value: T) => boolean, onEvict: (value: T) => void) {
    this.#maxEntries = maxEntries;
    this.#idleTtlInMs = idleTtlInMs;
    this.#isRetirable = isRetirable;
    this.#onEvict = onEvict;
  }

  get size(): number {
    return this.#slots.size;
  }

  /** The value for `key`, marked as just used. */
  touch(key: string, at: number): T | undefined {
    const slot = this.#slots.get(key);
    if (slot === undefined) return undefined;
    this.#slots.delete(key);
    slot.usedAt = at;
    this.#slots.set(key, slot);
    return slot.value;
  }

  /** The value for `key`, not marked as used. */
  peek(key: string): T | undefined {
    return this.#slots.get(key)?.value;
  }

  /** Adds `value` as the most recently used, forgetting the least recently used beyond the bound. */
  add(key: string, value: T, at: number): T {
    this.#slots.delete(key);
    this.#slots.set(key, { value, usedAt: at });
    if (this.#slots.size > this.#maxEntries) this.#forget(this.#slots.keys().next().value as string);
    if (this.#timer === undefined && this.#idleTtlInMs !== Infinity) {
      // Every half TTL, within a tenth of a second and a minute: the TTL is honoured, and a sweep costs nothing.
      this.#timer = setInterval(() => this.sweep(), Math.min(Math.max(this.#idleTtlInMs / 2, 100), 60_000));
      this.#timer.unref();
    }
    return value;
  }

  /** Every value, least recently used first. */
  *values(): IterableIterator<T> {
    for (const slot of this.#slots.values()) yield slot.value;
  }

  /** Forgets every entry idle for the TTL, and every retirable one. */
  sweep(): void {
    const cutoff = performance.now() - this.#idleTtlInMs;
    for (const [key, slot] of this.#slots) if (slot.usedAt <= cutoff || this.#isRetirable(slot.value)) this.#forget(key);
    if (this.#slots.size === 0) this.clear();
  }

  #forget(key: string): void {
    const slot = this.#slots.get(key);
    this.#slots.delete(key);
    if (slot !== undefined) this.#onEvict(slot.value);
  }

  /** Forgets everything and stops the timer. */
  clear(): void {
    this.#slots.clear();
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * A size- and age-bounded map from scope key to value, in least-recently-used order:
 * a `Map` keeps insertion order, so a touch is delete + set and the oldest entry is
 * the first key. (No LRU library: we need an eviction callback and an oldest-first
 * idle sweep that stops at the first fresh entry, and a Map gives both in a few lines.)
 */
export interface ScopeRegistry<T> {
  /** Live entries. */
  size(): number;
  /** The value for `key`, marked as just used; undefined when absent. */
  touch(key: string): T | undefined;
  /** The value for `key` without marking it used. */
  peek(key: string): T | undefined;
  /** Adds `value` as the most recently used entry, evicting the least recently used beyond the bound; returns `value`. */
  add(key: string, value: T): T;
  /** Evicts every entry idle for at least the TTL, and every retirable one; returns how many went. */
  sweep(): number;
  /** Every live value, least recently used first. */
  values(): IterableIterator<T>;
  /** Evicts everything and stops the sweep timer. */
  clear(): void;
}

/** Options of {@link createScopeRegistry}. */
export interface ScopeRegistryOptions<T> {
  /** Most entries kept. */
  maxEntries: number;
  /** An entry unused for this long is evicted by the sweep; `Infinity` for never. */
  idleTtlInMs: number;
  /** Called once for every evicted entry (by bound, sweep or clear). */
  onEvict?: (key: string, value: T) => void;
  /** The clock. Defaults to `Date.now`. */
  now?: () => number;
  /** An entry the sweep evicts even when it is in use (e.g. a circuit with nothing left to remember). */
  isRetirable?: (value: T) => boolean;
}

/** Bounds on how often the idle sweep runs: often enough to honour the TTL, rarely enough to cost nothing. */
const MIN_SWEEP_INTERVAL_IN_MS = 100;
const MAX_SWEEP_INTERVAL_IN_MS = 60_000;

interface Slot<T> {
  value: T;
  lastUsedAt: number;
}

/**
 * Creates a {@link ScopeRegistry}. Its one sweep timer runs only while the registry
 * holds entries, every half TTL (clamped to 0.1-60 s), and is `unref()`ed.
 */
export function createScopeRegistry<T>(options: ScopeRegistryOptions<T>): ScopeRegistry<T> {
  const { maxEntries, idleTtlInMs, onEvict, isRetirable } = options;
  const now = options.now ?? Date.now;
  const slots = new Map<string, Slot<T>>();
  const sweepIntervalInMs = Math.min(Math.max(idleTtlInMs / 2, MIN_SWEEP_INTERVAL_IN_MS), MAX_SWEEP_INTERVAL_IN_MS);
  let timer: ReturnType<typeof setInterval> | undefined;

  const evict = (key: string, slot: Slot<T>): void => {
    slots.delete(key);
    onEvict?.(key, slot.value);
  };
  const stopTimerIfEmpty = (): void => {
    if (slots.size > 0 || timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
  };
  const sweep = (): number => {
    const cutoff = now() - idleTtlInMs;
    let evicted = 0;
    for (const [key, slot] of slots) {
      const idle = slot.lastUsedAt <= cutoff;
      // Oldest first: without a retirement test, the first fresh entry means every later one is fresh too.
      if (!idle && isRetirable === undefined) break;
      if (!idle && !isRetirable?.(slot.value)) continue;
      evict(key, slot);
      evicted += 1;
    }
    stopTimerIfEmpty();
    return evicted;
  };
  const startTimer = (): void => {
    if (timer !== undefined || idleTtlInMs === Infinity) return;
    timer = setInterval(sweep, sweepIntervalInMs);
    timer.unref();
  };

  return {
    size: () => slots.size,
    touch(key) {
      const slot = slots.get(key);
      if (slot === undefined) return undefined;
      slots.delete(key);
      slot.lastUsedAt = now();
      slots.set(key, slot);
      return slot.value;
    },
    peek(key) {
      return slots.get(key)?.value;
    },
    add(key, value) {
      const existing = slots.get(key);
      if (existing !== undefined) evict(key, existing);
      slots.set(key, { value, lastUsedAt: now() });
      while (slots.size > maxEntries) {
        const oldest = slots.entries().next().value;
        if (oldest === undefined) break;
        evict(oldest[0], oldest[1]);
      }
      startTimer();
      return value;
    },
    sweep,
    *values() {
      for (const slot of slots.values()) yield slot.value;
    },
    clear() {
      for (const [key, slot] of [...slots]) evict(key, slot);
      stopTimerIfEmpty();
    },
  };
}

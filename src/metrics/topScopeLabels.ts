/** The label value shared by every scope that did not earn its own. */
export const OTHER_PARTITION_LABEL = "other";

/**
 * Decides which partition scopes get their own `partition` label value, keeping the series
 * count at most `topN + 1` per service whatever the key space. A scope earns a label once it
 * has been throttled `minThrottles` times while a slot is free, so the heavy hitters (which get
 * there first) take the slots and one-off throttles do not. Slots are kept for the process's
 * life: a counter series cannot be handed to another partition without breaking `rate()`.
 * Candidate counts live in a table of bounded `capacity` (a newcomer evicts the smallest count
 * and starts at 1, so a flood of one-off scopes cannot promote itself), dropped once every slot is taken.
 */
export class TopScopeLabels {
  readonly #topN: number;
  readonly #minThrottles: number;
  readonly #capacity: number;
  readonly #labelled = new Set<string>();
  #candidates = new Map<string, number>();

  constructor(topN: number, minThrottles: number, capacity = Math.max(100, topN * 10)) {
    this.#topN = topN;
    this.#minThrottles = minThrottles;
    this.#capacity = capacity;
  }

  /** Records one throttle of `scope` and returns its label: the scope itself, or `other`. */
  label(scope: string): string {
    if (this.#labelled.has(scope)) return scope;
    if (this.#labelled.size >= this.#topN) return OTHER_PARTITION_LABEL;
    const count = this.#bump(scope);
    if (count < this.#minThrottles) return OTHER_PARTITION_LABEL;
    this.#labelled.add(scope);
    this.#candidates.delete(scope);
    if (this.#labelled.size >= this.#topN) this.#candidates = new Map();
    return scope;
  }

  /** Whether `scope` has its own label; records nothing (for gauges read at scrape time). */
  has(scope: string): boolean {
    return this.#labelled.has(scope);
  }

  /** The scopes that have their own label, in the order they earned it. */
  labelledScopes(): string[] {
    return [...this.#labelled];
  }

  #bump(scope: string): number {
    const known = this.#candidates.get(scope);
    if (known !== undefined) {
      this.#candidates.set(scope, known + 1);
      return known + 1;
    }
    if (this.#candidates.size >= this.#capacity) this.#evictSmallest();
    this.#candidates.set(scope, 1);
    return 1;
  }

  #evictSmallest(): void {
    let smallestKey: string | undefined;
    let smallest = Infinity;
    for (const [key, count] of this.#candidates) {
      if (count < smallest) {
        smallest = count;
        smallestKey = key;
      }
    }
    if (smallestKey !== undefined) this.#candidates.delete(smallestKey);
  }
}

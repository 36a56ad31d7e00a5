/** One armed attempt deadline: aborts `controller` when it passes, unless released first. */
export interface ArmedDeadline {
  /**
   * Undefined once released: a released deadline may wait in the queue behind a hung one
   * until that one expires, and must not keep its attempt's signal (and the HTTP client's
   * listeners on it) alive meanwhile.
   */
  readonly controller: AbortController | undefined;
  /** True once the deadline passed and the controller was aborted for it. */
  readonly timedOut: boolean;
}

/**
 * Per-attempt timeouts for one retry policy, on one timer. Attempts of a policy mostly
 * share one timeout, so their deadlines arrive in order: they wait in a queue, oldest
 * first, and a single `unref()`ed timer is set for the oldest live one. Arming and
 * releasing cost an array push and a flag instead of a `setTimeout`/`clearTimeout` pair
 * each (which cost more than the rest of the policy's bookkeeping together). A deadline
 * earlier than the newest queued one (the last attempt before `maxElapsedInMs`) gets a
 * timer of its own. Nothing keeps the process alive; with nothing armed, at most one
 * timer is left, and it stops at its next firing.
 */
export interface AttemptDeadlines {
  /** Aborts `controller` `timeoutInMs` after `now` (a `performance.now()` reading) unless released. */
  arm(controller: AbortController, now: number, timeoutInMs: number): ArmedDeadline;
  /** The attempt ended: its deadline no longer matters. */
  release(deadline: ArmedDeadline): void;
  /**
   * Deadlines armed and not yet released or passed, plus released ones still queued behind
   * a live one (at most about as many as are live, plus 1024).
   */
  queued(): number;
}

interface Entry {
  controller: AbortController | undefined;
  at: number;
  timedOut: boolean;
  done: boolean;
  /** Only for a deadline out of queue order. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Compact the queue once this many released entries sit before its head, or behind a live
 * head (a hung attempt) and make up half the queue. So the queue holds at most about twice
 * the attempts in flight plus this many, however long one attempt hangs.
 */
const COMPACT_AFTER = 1024;

/** Creates an {@link AttemptDeadlines}. */
export function createAttemptDeadlines(): AttemptDeadlines {
  // Live entries are queue[head..tail); slots before head are cleared, so nothing released is kept.
  let queue: (Entry | undefined)[] = [];
  let head = 0;
  let tail = 0;
  /** The newest queued deadline (kept here: reading `queue[tail - 1]` of an empty queue is a slow out-of-bounds read). */
  let newestAt = -Infinity;
  /** Released entries still in queue[head..tail), waiting behind a live one. */
  let released = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Infinity;

  const expire = (entry: Entry): void => {
    entry.done = true;
    entry.timedOut = true;
    entry.controller?.abort();
  };

  /** Drops released and passed entries from the head, then sets the timer for the new head. */
  const settle = (now: number): void => {
    while (head < tail) {
      const entry = queue[head] as Entry;
      if (!entry.done && entry.at > now) break;
      if (entry.done) released -= 1;
      else expire(entry);
      queue[head] = undefined;
      head += 1;
    }
    if (head === tail) {
      // Emptied by index, not by `length = 0`, which would free the backing store and make the
      // next push allocate one; unless a burst left it large, which is worth giving back.
      if (queue.length > COMPACT_AFTER) queue = [];
      head = 0;
      tail = 0;
    } else if (head >= COMPACT_AFTER && head * 2 >= tail) {
      queue = queue.slice(head, tail);
      tail -= head;
      head = 0;
    }
    schedule();
  };

  /**
   * Makes sure a timer fires by the head's deadline. A timer due earlier is left alone (it
   * settles and sets the next), and so is one left with nothing to wait for: it fires once
   * and stops. So a steady stream of quick attempts costs about one timer per timeout
   * period, not one per attempt.
   */
  const schedule = (): void => {
    if (head >= tail) return;
    const next = (queue[head] as Entry).at;
    if (timer !== undefined && timerAt <= next) return;
    if (timer !== undefined) clearTimeout(timer);
    timerAt = next;
    timer = setTimeout(onTimer, Math.max(0, next - performance.now()));
    timer.unref();
  };

  /** Drops released entries from anywhere in the queue, keeping the live ones in deadline order. */
  const dropReleased = (): void => {
    const live: Entry[] = [];
    for (let index = head; index < tail; index++) {
      const entry = queue[index] as Entry;
      if (!entry.done) live.push(entry);
    }
    queue = live;
    head = 0;
    tail = live.length;
    released = 0;
    newestAt = tail > 0 ? (live[tail - 1] as Entry).at : -Infinity;
  };

  const onTimer = (): void => {
    timer = undefined;
    timerAt = Infinity;
    settle(performance.now());
  };

  return {
    arm(controller, now, timeoutInMs) {
      const entry: Entry = { controller, at: now + timeoutInMs, timedOut: false, done: false, timer: undefined };
      if (head < tail && entry.at < newestAt) {
        entry.timer = setTimeout(() => {
          if (!entry.done) expire(entry);
        }, timeoutInMs);
        entry.timer.unref();
        return entry;
      }
      queue[tail] = entry;
      tail += 1;
      newestAt = entry.at;
      schedule();
      return entry;
    },
    release(deadline) {
      const entry = deadline as Entry;
      if (entry.done) return;
      entry.done = true;
      entry.controller = undefined;
      if (entry.timer !== undefined) {
        clearTimeout(entry.timer);
        return;
      }
      released += 1;
      // The common case: the oldest attempt ended first. Later ones wait for the timer or the next release.
      if (queue[head] === entry) settle(-Infinity);
      // Behind a hung attempt, released entries would pile up until it times out: drop them in bulk.
      else if (released >= COMPACT_AFTER && released * 2 >= tail - head) dropReleased();
    },
    queued: () => tail - head,
  };
}

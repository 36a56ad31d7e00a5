import type { PartitionScope } from "../../address/partitionScope.js";
import type { FaultKind } from "./faultRule.js";

/** One request the simulator saw, and what it did with it. */
export interface RequestRecord {
  /** When the request had been read, in epoch milliseconds. */
  time: number;
  /** The HTTP method. */
  method: string;
  /** Path and query, with SAS parameters (`sig` and the rest) removed. */
  path: string;
  /** The partition scope read from the request, if any. */
  scope?: PartitionScope | undefined;
  /** The fault injected, or undefined when the request was passed through. */
  fault?: FaultKind | undefined;
  /** The status the client received; undefined when its connection was reset instead. */
  status?: number | undefined;
  /** The status storage answered with, when the request was forwarded. */
  upstreamStatus?: number | undefined;
  /** Whether the request reached storage. */
  forwarded: boolean;
  /** The name of the rule that faulted it. */
  ruleName?: string | undefined;
  /**
   * The request's `x-ms-client-request-id`, when it is a plain id (letters, digits and
   * `-_.:`, at most 128 characters). The Azure SDKs keep it across one operation's
   * retries, so records sharing an id are attempts of one operation.
   */
  clientRequestId?: string | undefined;
}

/**
 * Fields a record must have to be counted. Scope fields are given flat. A key that is
 * present with the value undefined matches records where that field is undefined, so
 * `{ fault: undefined }` counts requests that were passed through.
 */
export interface RecordFilter {
  /** {@link RequestRecord.method}, case-insensitive. */
  method?: string;
  /** {@link RequestRecord.path}, exactly. */
  path?: string;
  /** {@link RequestRecord.fault}; undefined for requests passed through. */
  fault?: FaultKind | undefined;
  /** {@link RequestRecord.status}; undefined for reset connections. */
  status?: number | undefined;
  /** Matches {@link RequestRecord.upstreamStatus}. */
  upstreamStatus?: number | undefined;
  /** Matches {@link RequestRecord.forwarded}. */
  forwarded?: boolean;
  /** Matches {@link RequestRecord.ruleName}. */
  ruleName?: string | undefined;
  /** The scope's service. */
  service?: PartitionScope["service"];
  /** The scope's account. */
  account?: string;
  /** The scope's table, container or queue. */
  resource?: string;
  /** The scope's partition; undefined for requests without one. */
  partition?: string | undefined;
}

/** Counts over every request since the last reset, including records no longer kept. */
export interface RequestTotals {
  /** Requests seen. */
  requests: number;
  /** Requests that reached storage. */
  forwarded: number;
  /** Requests per injected fault kind. */
  faults: Partial<Record<FaultKind, number>>;
  /** Records dropped to keep the log within its bound. */
  dropped: number;
}

const SCOPE_FIELDS = ["service", "account", "resource", "partition"] as const;
const RECORD_FIELDS = ["method", "path", "fault", "status", "upstreamStatus", "forwarded", "ruleName"] as const;

/** The newest `maxRecords` records, plus totals over all of them. */
export class RequestLog {
  readonly #maxRecords: number;
  #records: RequestRecord[] = [];
  #totals: RequestTotals = emptyTotals();

  constructor(maxRecords: number) {
    this.#maxRecords = maxRecords;
  }

  /** The kept records, oldest first. */
  get records(): readonly RequestRecord[] {
    return this.#records;
  }

  /** A snapshot of the totals. */
  get totals(): RequestTotals {
    return { ...this.#totals, faults: { ...this.#totals.faults } };
  }

  /** Stores a record (the caller may still fill in its outcome) and counts it. */
  add(record: RequestRecord): void {
    this.#records.push(record);
    this.#totals.requests++;
    if (record.fault !== undefined) this.#totals.faults[record.fault] = (this.#totals.faults[record.fault] ?? 0) + 1;
    if (this.#records.length > this.#maxRecords) {
      // shift() is cheap here: V8 trims arrays from the front in place.
      this.#records.shift();
      this.#totals.dropped++;
    }
  }

  /** Counts a request that reached storage (known only after the fault decision). */
  countForwarded(): void {
    this.#totals.forwarded++;
  }

  /** Counts kept records that match the filter or predicate; all kept records without one. */
  count(filter?: RecordFilter | ((record: RequestRecord) => boolean)): number {
    if (filter === undefined) return this.#records.length;
    const predicate = typeof filter === "function" ? filter : (record: RequestRecord) => matchesFilter(record, filter);
    let count = 0;
    for (const record of this.#records) if (predicate(record)) count++;
    return count;
  }

  /** Forgets every record and zeroes the totals. */
  reset(): void {
    this.#records = [];
    this.#totals = emptyTotals();
  }
}

function matchesFilter(record: RequestRecord, filter: RecordFilter): boolean {
  for (const field of RECORD_FIELDS) {
    if (!Object.hasOwn(filter, field)) continue;
    const wanted = filter[field];
    const actual = record[field];
    if (field === "method" && typeof wanted === "string") {
      if (wanted.toUpperCase() !== record.method.toUpperCase()) return false;
    } else if (actual !== wanted) return false;
  }
  for (const field of SCOPE_FIELDS) {
    if (Object.hasOwn(filter, field) && record.scope?.[field] !== filter[field]) return false;
  }
  return true;
}

function emptyTotals(): RequestTotals {
  return { requests: 0, forwarded: 0, faults: {}, dropped: 0 };
}

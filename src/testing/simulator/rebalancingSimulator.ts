// Test tooling (the `/testing` entry): the fault-injecting proxy in front of Azurite. Over 250 lines:
// the HTTP server, forwarding and each fault's wire behaviour belong together.
import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { detectServiceFromUrl } from "../../address/storageHost.js";
import { extractScope } from "../../address/extractScope.js";
import { STORAGE_SERVICES, type StorageService } from "../../address/partitionScope.js";
import { describeValue as describe } from "../../validation/describeValue.js";
import { numberOption, validateChoiceOption } from "../../validation/optionSchema.js";
import { validateFaultRule, type FaultRule, type SimulatedRequestInfo, type ValidatedFaultRule } from "./faultRule.js";
import { FaultSchedule } from "./faultSchedule.js";
import { mulberry32 } from "./mulberry32.js";
import { redactPath } from "./redactPath.js";
import { RequestLog, type RecordFilter, type RequestRecord, type RequestTotals } from "./requestLog.js";
import { defaultErrorCode, storageErrorResponse } from "./storageErrorResponse.js";
import { changesetErrorResponse } from "./changesetErrorResponse.js";

/** Options of {@link startRebalancingSimulator}. */
export interface SimulatorOptions {
  /**
   * The storage origin to forward to, e.g. Azurite's `http://127.0.0.1:10002`. Only
   * the origin is used: clients' paths (`/devstoreaccount1/...`) are forwarded unchanged.
   */
  target: string;
  /** Seed of the generator behind `probability`. Defaults to 1, so runs repeat. */
  seed?: number;
  /** The address to listen on. Defaults to `"127.0.0.1"`. */
  host?: string;
  /** The port to listen on; 0 picks a free one. Defaults to 0. */
  port?: number;
  /**
   * The service to scope requests as. Defaults to detection from the Host header, and
   * `"table"` when that fails (Azurite path-style URLs name no service).
   */
  service?: StorageService;
  /** How many records to keep; older ones are dropped but stay in the totals. Defaults to 100000. */
  maxRecords?: number;
  /**
   * Called with each record once its outcome is known. Exceptions are reported with
   * `process.emitWarning`, not thrown into the proxy.
   */
  onRecord?: (record: RequestRecord) => void;
}

/** Defaults applied by {@link startRebalancingSimulator}. */
export const DEFAULT_SIMULATOR_OPTIONS = {
  seed: 1,
  host: "127.0.0.1",
  port: 0,
  maxRecords: 100_000,
} as const;

/** A running simulator; see {@link startRebalancingSimulator}. */
export interface RebalancingSimulator {
  /** The proxy's origin, e.g. `http://127.0.0.1:41234`; use `${url}/devstoreaccount1` as the account endpoint. */
  readonly url: string;
  /** Schedules a fault (validated now; throws TypeError/RangeError). Returns a function that removes it. */
  addFault(rule: FaultRule): () => void;
  /** Removes every fault. */
  clearFaults(): void;
  /** The newest records, oldest first (at most `maxRecords`). */
  readonly records: readonly RequestRecord[];
  /** Counts over every request since the last reset, dropped records included. */
  readonly totals: RequestTotals;
  /** Counts kept records matching a filter (see {@link RecordFilter}) or predicate; all without one. */
  count(filter?: RecordFilter | ((record: RequestRecord) => boolean)): number;
  /** Forgets the records and zeroes the totals. */
  resetRecords(): void;
  /** Closes the server and every open connection, cancels pending delays and frozen requests. Idempotent. */
  stop(): Promise<void>;
}

/** Largest body read as text for scope extraction: a `$batch` is at most 4 MiB. */
const MAX_SCOPE_BODY_BYTES = 8 * 1024 * 1024;
/** Request headers kept from fault predicates, so user code cannot log them by accident. */
const SECRET_HEADERS = ["authorization", "proxy-authorization", "x-ms-copy-source-authorization", "cookie"];
/** A client request id kept in records: plain, bounded, so a record never carries arbitrary text. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Starts an HTTP reverse proxy in front of Azure Storage (normally Azurite) that answers
 * the way Azure does while a partition is being rebalanced: per partition, on a
 * schedule, it returns 503 ServerBusy or 500 OperationTimedOut, resets connections
 * before or after storage applied a write, or slows responses; it can also freeze the
 * whole endpoint or refuse connections for a while (see {@link FaultKind}).
 *
 * Requests are buffered, scoped as the retry policy scopes them (`$batch` bodies included),
 * recorded, and either faulted or forwarded with method, path and headers unchanged,
 * so SharedKey signatures still verify at the target; the target's answer reaches the client
 * with its status and headers as the target sent them. Logs nothing; records carry no
 * Authorization header and no SAS signature.
 */
export async function startRebalancingSimulator(options: SimulatorOptions): Promise<RebalancingSimulator> {
  const config = validateOptions(options);
  const simulator = new Simulator(config);
  await simulator.listen();
  return simulator;
}

interface SimulatorConfig {
  target: URL;
  seed: number;
  host: string;
  port: number;
  service: StorageService | undefined;
  maxRecords: number;
  onRecord: ((record: RequestRecord) => void) | undefined;
}

function validateOptions(options: SimulatorOptions): SimulatorConfig {
  if (typeof options !== "object" || options === null) throw new TypeError(`options must be an object; got ${describe(options)}.`);
  let target: URL;
  try {
    target = new URL(options.target);
  } catch {
    throw new TypeError(`target must be an absolute http:// URL; got ${describe(options.target)}.`);
  }
  if (target.protocol !== "http:") throw new TypeError(`target must be an http:// URL; got protocol ${JSON.stringify(target.protocol)}.`);
  if (options.host !== undefined && (typeof options.host !== "string" || options.host === "")) {
    throw new TypeError(`host must be a non-empty string; got ${describe(options.host)}.`);
  }
  if (options.onRecord !== undefined && typeof options.onRecord !== "function") {
    throw new TypeError(`onRecord must be a function; got ${describe(options.onRecord)}.`);
  }
  return {
    target,
    seed: numberOption({ min: 0, max: 2 ** 32 - 1, integer: true }, DEFAULT_SIMULATOR_OPTIONS.seed)(options.seed, "seed"),
    host: options.host ?? DEFAULT_SIMULATOR_OPTIONS.host,
    port: numberOption({ max: 65_535, integer: true }, DEFAULT_SIMULATOR_OPTIONS.port)(options.port, "port"),
    service: options.service === undefined ? undefined : validateChoiceOption("service", options.service, STORAGE_SERVICES),
    maxRecords: numberOption({ min: 1, integer: true }, DEFAULT_SIMULATOR_OPTIONS.maxRecords)(options.maxRecords, "maxRecords"),
    onRecord: options.onRecord,
  };
}

/** A response read in full from the target. */
interface BufferedResponse {
  status: number;
  statusMessage: string;
  headers: string[];
  body: Buffer;
}

class Simulator implements RebalancingSimulator {
  readonly #config: SimulatorConfig;
  readonly #schedule: FaultSchedule;
  readonly #log: RequestLog;
  readonly #server = createServer();
  // keepAlive reuses connections to the target; stop() destroys them.
  readonly #agent = new Agent({ keepAlive: true });
  readonly #sockets = new Set<Socket>();
  readonly #delays = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  /** Requests held by each `freeze` rule: one timer per rule, released (and reset) when it ends. */
  readonly #holds = new Map<ValidatedFaultRule, { timer: NodeJS.Timeout; releases: Set<() => void> }>();
  /** The removers of `refuseConnections` rules not yet ended. */
  readonly #refusals = new Set<() => void>();
  /** How many `refuseConnections` rules are in force now; the server listens only while 0. */
  #refusing = 0;
  #port = 0;
  #url = "";
  #stopping: Promise<void> | undefined;
  #closed = false;

  constructor(config: SimulatorConfig) {
    this.#config = config;
    // Idle keep-alive connections stay open until a client closes them or stop() destroys them.
    // Node's 5 s default closes them under clients that never do (the Azure SDKs' agent keeps idle
    // sockets without a timeout): a request reusing one just as it closes fails with `socket hang
    // up`, a reset no fault rule asked for (0 disables the timeout). The `Keep-Alive` header a client
    // sees is the target's, passed through with its other headers: Node writes its own only when
    // an answer has none and the timeout is not 0.
    this.#server.keepAliveTimeout = 0;
    this.#schedule = new FaultSchedule({ now: () => performance.now(), random: mulberry32(config.seed) });
    this.#log = new RequestLog(config.maxRecords);
    this.#server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
    this.#server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      // While connections are refused, an answer in flight finishes and its connection is not reused.
      res.once("finish", () => {
        if (this.#refusing > 0) req.socket.end();
      });
      this.#handle(req, res).catch(() => destroy(req.socket));
    });
    // A client that sends garbage gets its connection closed, nothing more.
    this.#server.on("clientError", (_error, socket: Socket) => socket.destroy());
  }

  get url(): string {
    return this.#url;
  }

  get records(): readonly RequestRecord[] {
    return this.#log.records;
  }

  get totals(): RequestTotals {
    return this.#log.totals;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(this.#config.port, this.#config.host, () => {
        this.#server.off("error", reject);
        const address = this.#server.address();
        if (typeof address !== "object" || address === null) {
          reject(new Error("the simulator's server has no TCP address"));
          return;
        }
        const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
        this.#port = address.port;
        this.#url = `http://${host}:${address.port}`;
        resolve();
      });
    });
  }

  addFault(rule: FaultRule): () => void {
    if (typeof rule === "object" && rule !== null && rule.kind === "refuseConnections") return this.#addRefusal(validateFaultRule(rule));
    return this.#schedule.add(rule, (removed) => this.#release(removed));
  }

  clearFaults(): void {
    this.#schedule.clear();
    for (const remove of [...this.#refusals]) remove();
  }

  count(filter?: RecordFilter | ((record: RequestRecord) => boolean)): number {
    return this.#log.count(filter);
  }

  resetRecords(): void {
    this.#log.reset();
  }

  stop(): Promise<void> {
    this.#closed = true;
    this.#stopping ??= new Promise<void>((resolve) => {
      // Stopped first, so that ending the refusals below does not listen again.
      this.clearFaults();
      for (const rule of [...this.#holds.keys()]) this.#release(rule);
      for (const delay of this.#delays) {
        clearTimeout(delay.timer);
        delay.resolve();
      }
      this.#delays.clear();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
      for (const socket of this.#sockets) socket.destroy();
      this.#agent.destroy();
    });
    return this.#stopping;
  }

  get #stopped(): boolean {
    return this.#closed;
  }

  /** Schedules a refusal: the listener closes at its start and listens again on the same port at its end. */
  #addRefusal(rule: ValidatedFaultRule): () => void {
    let active = false;
    let timer: NodeJS.Timeout | undefined;
    const end = (): void => {
      if (!this.#refusals.delete(end)) return;
      clearTimeout(timer);
      if (!active) return;
      active = false;
      this.#refusing--;
      this.#listenAgain();
    };
    const start = (): void => {
      active = true;
      this.#refusing++;
      if (this.#refusing === 1 && this.#server.listening) {
        // close() stops accepting and (Node >= 19) closes idle keep-alive connections; answers in flight finish.
        this.#server.close();
        this.#server.closeIdleConnections();
      }
      timer = setTimeout(end, rule.durationInMs);
      timer.unref();
    };
    this.#refusals.add(end);
    // Starting now means before addFault returns: a connection opened right after it is refused.
    if (rule.startInMs === 0) start();
    else {
      timer = setTimeout(start, rule.startInMs);
      timer.unref();
    }
    return end;
  }

  /** Listens again on the port it had, once no refusal is in force; retried while the port is taken. */
  #listenAgain(): void {
    if (this.#stopped || this.#refusing > 0 || this.#server.listening) return;
    const retry = (): void => {
      this.#server.off("listening", listening);
      setTimeout(() => this.#listenAgain(), 100).unref();
    };
    const listening = (): void => {
      this.#server.off("error", retry);
    };
    this.#server.once("error", retry);
    this.#server.once("listening", listening);
    this.#server.listen(this.#port, this.#config.host);
  }

  /** Holds a frozen request until its rule ends (or is removed, or the simulator stops) or its client goes away. */
  #hold(rule: ValidatedFaultRule, endsAt: number, socket: Socket): Promise<void> {
    if (this.#stopped || socket.destroyed) return Promise.resolve();
    let hold = this.#holds.get(rule);
    if (hold === undefined) {
      const timer = setTimeout(() => this.#release(rule), Math.max(0, endsAt - performance.now()));
      timer.unref();
      hold = { timer, releases: new Set() };
      this.#holds.set(rule, hold);
    }
    const releases = hold.releases;
    return new Promise((resolve) => {
      const release = (): void => {
        socket.off("close", release);
        releases.delete(release);
        resolve();
      };
      releases.add(release);
      socket.once("close", release);
    });
  }

  #release(rule: ValidatedFaultRule): void {
    const hold = this.#holds.get(rule);
    if (hold === undefined) return;
    clearTimeout(hold.timer);
    this.#holds.delete(rule);
    for (const release of [...hold.releases]) release();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on("error", () => undefined);
    const body = await readBody(req);
    if (this.#stopped) return destroy(req.socket);
    const info = this.#describe(req, body);
    const selected = this.#schedule.selectTimed(info);
    const rule = selected?.rule;
    const record: RequestRecord = { time: Date.now(), method: info.method, path: info.path, scope: info.scope, fault: rule?.kind, forwarded: false };
    if (rule?.name !== undefined) record.ruleName = rule.name;
    const clientRequestId = headerValue(req.headers["x-ms-client-request-id"]);
    if (clientRequestId !== undefined && CLIENT_REQUEST_ID.test(clientRequestId)) record.clientRequestId = clientRequestId;
    this.#log.add(record);
    try {
      if (rule?.kind === "freeze" && selected !== undefined) {
        await this.#hold(rule, selected.endsAt, req.socket);
        return destroy(req.socket);
      }
      await this.#respond(req, res, body, info, rule, record);
    } finally {
      this.#report(record);
    }
  }

  async #respond(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    info: SimulatedRequestInfo,
    rule: ValidatedFaultRule | undefined,
    record: RequestRecord,
  ): Promise<void> {
    switch (rule?.kind) {
      case undefined:
        return this.#passThrough(req, res, body, record);
      case "freeze":
      case "refuseConnections":
        // Handled before an answer is chosen (#handle) or on the listener (#addRefusal).
        return destroy(req.socket);
      case "serverBusy":
      case "throttle":
        return this.#answerError(res, req, info, record, rule.status ?? 503, rule.errorCode ?? "ServerBusy", retryAfterHeaders(rule));
      case "status":
        return this.#answerError(res, req, info, record, rule.status ?? 500, rule.errorCode ?? defaultErrorCode(rule.status ?? 500));
      case "operationTimedOut":
        await this.#sleep(rule.delayInMs);
        return this.#answerError(res, req, info, record, rule.status ?? 500, rule.errorCode ?? "OperationTimedOut");
      case "failChangeset":
        return this.#answerFailedChangeset(res, req, record, rule);
      case "resetBeforeForward":
        return destroy(req.socket);
      case "resetAfterForward": {
        const upstream = await this.#forwardBuffered(req, body, record);
        if (upstream !== undefined) record.upstreamStatus = upstream.status;
        return destroy(req.socket);
      }
      case "cutBodyAfterForward": {
        const upstream = await this.#forwardBuffered(req, body, record);
        if (upstream !== undefined) record.upstreamStatus = upstream.status;
        if (upstream === undefined || upstream.body.length === 0 || this.#stopped) return destroy(req.socket);
        const kept = withoutFraming(upstream.headers);
        res.writeHead(upstream.status, upstream.statusMessage, [...kept, "Content-Length", String(upstream.body.length)]);
        res.write(upstream.body.subarray(0, Math.floor(upstream.body.length / 2)), () => destroy(req.socket));
        return;
      }
      case "slow": {
        const upstream = await this.#forwardBuffered(req, body, record);
        if (upstream === undefined) return this.#answerBadGateway(res, record);
        record.upstreamStatus = upstream.status;
        await this.#sleep(rule.delayInMs);
        if (this.#stopped) return destroy(req.socket);
        record.status = upstream.status;
        res.writeHead(upstream.status, upstream.statusMessage, upstream.headers);
        res.end(upstream.body);
        return;
      }
    }
  }

  #describe(req: IncomingMessage, body: Buffer): SimulatedRequestInfo {
    // The server side: what arrived is read with the address module's pure readers, not a RequestAddress (a client request's).
    const pathAndQuery = req.url ?? "/";
    // A Host naming a storage endpoint (a client pointed at the proxy by DNS) scopes host-style;
    // any other Host is the proxy's own address, so scope path-style as the target would.
    const hostUrl = `http://${req.headers.host ?? ""}${pathAndQuery}`;
    const hostService = detectServiceFromUrl(hostUrl);
    const url = hostService === undefined ? this.#config.target.origin + pathAndQuery : hostUrl;
    const service = this.#config.service ?? hostService ?? "table";
    const text = service === "table" && body.length > 0 && body.length <= MAX_SCOPE_BODY_BYTES ? body.toString("utf8") : undefined;
    const method = req.method ?? "GET";
    const headers = { ...req.headers };
    for (const secret of SECRET_HEADERS) delete headers[secret];
    return { method, path: redactPath(pathAndQuery), service, scope: extractScope({ method, url, body: text }, service), headers, body: text };
  }

  /** Forwards and streams the answer back: the path taken by every request without a fault. */
  async #passThrough(req: IncomingMessage, res: ServerResponse, body: Buffer, record: RequestRecord): Promise<void> {
    const upstream = await this.#forward(req, body, record);
    if (upstream === undefined) return this.#answerBadGateway(res, record);
    const status = upstream.statusCode ?? 502;
    record.upstreamStatus = status;
    record.status = status;
    // The target's headers as it sent them, Connection, Keep-Alive and Transfer-Encoding included:
    // Node frames the piped body by them (it chunks again what arrives unchunked).
    res.writeHead(status, upstream.statusMessage, upstream.rawHeaders);
    await new Promise<void>((resolve) => {
      upstream.pipe(res);
      res.once("close", () => {
        // The client went away mid-answer: release the target connection instead of leaving it paused.
        if (!upstream.complete) upstream.destroy();
        resolve();
      });
      upstream.once("error", () => {
        destroy(req.socket);
        resolve();
      });
    });
  }

  #forward(req: IncomingMessage, body: Buffer, record: RequestRecord): Promise<IncomingMessage | undefined> {
    return this.#forwardOnce(req, body, record, true);
  }

  /**
   * One forward. A kept-alive connection to the target that the target closed as idle just as
   * it was reused fails before any answer (`reusedSocket`, Node's documented case): sent again
   * once on a new connection, as the target never read it, instead of answering an unscheduled 502.
   */
  #forwardOnce(req: IncomingMessage, body: Buffer, record: RequestRecord, mayResend: boolean): Promise<IncomingMessage | undefined> {
    return new Promise((resolve) => {
      const target = this.#config.target;
      const outgoing = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          // Raw headers as received, Host included: the SharedKey signature covers them and the path.
          headers: req.rawHeaders,
          setHost: false,
          agent: this.#agent,
        },
        (response) => resolve(response),
      );
      outgoing.once("error", (error: NodeJS.ErrnoException) => {
        const idleClosed = outgoing.reusedSocket && error.code === "ECONNRESET";
        resolve(idleClosed && mayResend && !this.#stopped ? this.#forwardOnce(req, body, record, false) : undefined);
      });
      if (mayResend) {
        record.forwarded = true;
        this.#log.countForwarded();
      }
      outgoing.end(body);
    });
  }

  async #forwardBuffered(req: IncomingMessage, body: Buffer, record: RequestRecord): Promise<BufferedResponse | undefined> {
    const response = await this.#forward(req, body, record);
    if (response === undefined) return undefined;
    try {
      const responseBody = await readBody(response);
      return {
        status: response.statusCode ?? 502,
        statusMessage: response.statusMessage ?? "",
        headers: response.rawHeaders,
        body: responseBody,
      };
    } catch {
      return undefined;
    }
  }

  #answerError(
    res: ServerResponse,
    req: IncomingMessage,
    info: SimulatedRequestInfo,
    record: RequestRecord,
    status: number,
    code: string,
    extraHeaders: Record<string, string> = {},
  ): void {
    if (this.#stopped) return destroy(req.socket);
    const answer = storageErrorResponse({
      service: info.scope?.service ?? info.service,
      status,
      code,
      method: info.method,
      clientRequestId: headerValue(req.headers["x-ms-client-request-id"]),
      version: headerValue(req.headers["x-ms-version"]),
      extraHeaders,
    });
    record.status = status;
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  /** A `$batch` answered 202 whose changeset failed: nothing forwarded, as a failed transaction applies nothing. */
  #answerFailedChangeset(res: ServerResponse, req: IncomingMessage, record: RequestRecord, rule: ValidatedFaultRule): void {
    if (this.#stopped) return destroy(req.socket);
    const status = rule.status ?? 503;
    const answer = changesetErrorResponse({
      status,
      code: rule.errorCode ?? defaultErrorCode(status),
      clientRequestId: headerValue(req.headers["x-ms-client-request-id"]),
      version: headerValue(req.headers["x-ms-version"]),
      changesetHeaders: retryAfterHeaders(rule),
    });
    record.status = answer.status;
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  #answerBadGateway(res: ServerResponse, record: RequestRecord): void {
    record.status = 502;
    if (res.headersSent || res.destroyed) return;
    res.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
    res.end("The rebalancing simulator could not reach its target.\n");
  }

  /** A live request's delay; tracked so that stop() can cancel it. */
  #sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const delay = {
        timer: setTimeout(() => {
          this.#delays.delete(delay);
          resolve();
        }, ms),
        resolve,
      };
      this.#delays.add(delay);
    });
  }

  #report(record: RequestRecord): void {
    const onRecord = this.#config.onRecord;
    if (onRecord === undefined) return;
    try {
      onRecord(record);
    } catch (error) {
      process.emitWarning(`rebalancing simulator onRecord threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

function retryAfterHeaders(rule: ValidatedFaultRule): Record<string, string> {
  const hint = rule.retryAfter;
  if (hint === undefined) return {};
  const header = hint.header ?? (hint.ms !== undefined ? "x-ms-retry-after-ms" : "Retry-After");
  const ms = hint.ms ?? (hint.seconds ?? 0) * 1000;
  // Retry-After carries whole seconds; rounding up never invites an early retry.
  return { [header]: header === "Retry-After" ? String(Math.ceil(ms / 1000)) : String(Math.round(ms)) };
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.once("end", () => resolve(Buffer.concat(chunks)));
    stream.once("error", reject);
    stream.once("aborted", () => reject(new Error("request aborted")));
  });
}

/** Raw headers without the body's framing (Content-Length, Transfer-Encoding), which the caller sets itself. */
function withoutFraming(rawHeaders: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? "").toLowerCase();
    if (name !== "content-length" && name !== "transfer-encoding") kept.push(rawHeaders[i] ?? "", rawHeaders[i + 1] ?? "");
  }
  return kept;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Resets the connection (RST, so the client sees ECONNRESET), or closes it where RST is unavailable. */
function destroy(socket: Socket): void {
  if (socket.destroyed) return;
  if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
  else socket.destroy();
}

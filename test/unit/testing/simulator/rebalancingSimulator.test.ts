import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startRebalancingSimulator, type RebalancingSimulator, type SimulatorOptions } from "../../../../src/testing/simulator/rebalancingSimulator.js";
import type { RequestRecord } from "../../../../src/testing/simulator/requestLog.js";

/** What the stub storage received. */
interface Received {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

let upstream: Server;
let upstreamOrigin: string;
let received: Received[];
const started: RebalancingSimulator[] = [];

beforeEach(async () => {
  received = [];
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
      res.writeHead(201, "Created", ["X-Upstream", "yes", "Content-Type", "application/octet-stream"]);
      res.end(Buffer.from([0, 1, 2, 255]));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const address = upstream.address();
  upstreamOrigin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
});

afterEach(async () => {
  await Promise.all(started.splice(0).map((sim) => sim.stop()));
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

async function simulator(options: Partial<SimulatorOptions> = {}): Promise<RebalancingSimulator> {
  const sim = await startRebalancingSimulator({ target: upstreamOrigin, ...options });
  started.push(sim);
  return sim;
}

/** Sends one request with exactly these raw headers; resolves with the answer or the socket error. */
function send(
  origin: string,
  options: { method?: string; path: string; headers?: string[]; body?: Buffer | string; agent?: false },
): Promise<Answer | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    const url = new URL(origin);
    const given = options.headers ?? [];
    const headers = given.some((name, i) => i % 2 === 0 && name.toLowerCase() === "host") ? given : ["Host", url.host, ...given];
    const outgoing = request(
      { host: url.hostname, port: url.port, method: options.method ?? "GET", path: options.path, headers, agent: false },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("latin1") }));
      },
    );
    outgoing.on("error", (error) => resolve(error));
    outgoing.end(options.body);
  });
}

function answer(result: Answer | Error): Answer {
  if (result instanceof Error) throw result;
  return result;
}

const ENTITY = "/devstoreaccount1/orders(PartitionKey='a%20b',RowKey='r')";

/** Runs `test` with the origin of a target that answers every request with `handler` once its body is read. */
async function withTarget(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  test: (origin: string) => Promise<void>,
): Promise<void> {
  const target = createServer((req, res) => {
    req.resume();
    req.on("end", () => handler(req, res));
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  try {
    const address = target.address();
    await test(`http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`);
  } finally {
    target.closeAllConnections();
    await new Promise<void>((resolve) => target.close(() => resolve()));
  }
}

describe("startRebalancingSimulator: options", () => {
  it.each<[Partial<SimulatorOptions>, RegExp, ErrorConstructor]>([
    [{ target: "not a url" }, /target must be an absolute http:\/\/ URL; got "not a url"/, TypeError],
    [{ target: "https://127.0.0.1:1" }, /target must be an http:\/\/ URL; got protocol "https:"/, TypeError],
    [{ seed: -1 }, /seed must be between 0 and 4294967295; got -1/, RangeError],
    [{ seed: 1.5 }, /seed must be an integer; got 1\.5/, RangeError],
    [{ port: 70_000 }, /port must be between 0 and 65535; got 70000/, RangeError],
    [{ maxRecords: 0 }, /maxRecords must be between 1 and .*; got 0/, RangeError],
    [{ service: "file" as never }, /service must be one of .*; got "file"/, TypeError],
    [{ host: "" }, /host must be a non-empty string; got ""/, TypeError],
    [{ onRecord: "x" as never }, /onRecord must be a function; got "x"/, TypeError],
  ])("rejects %j", async (options, message, type) => {
    const promise = startRebalancingSimulator({ target: upstreamOrigin, ...options });
    await expect(promise).rejects.toThrow(type);
    await expect(promise).rejects.toThrow(message);
  });
});

describe("startRebalancingSimulator: forwarding", () => {
  it("forwards method, path, raw headers and body unchanged, and streams the answer back", async () => {
    const sim = await simulator();
    const body = Buffer.from([0xff, 0x00, 0x7f, 0x80]);
    const headers = ["Host", "example.invalid:1", "Authorization", "SharedKeyLite devstoreaccount1:c2ln", "X-Ms-Date", "today", "Content-Length", "4"];
    const result = answer(await send(sim.url, { method: "MERGE", path: `${ENTITY}?timeout=5`, headers, body }));
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: "MERGE", url: `${ENTITY}?timeout=5` });
    expect(received[0]?.rawHeaders.slice(0, headers.length)).toEqual(headers);
    expect(received[0]?.body.equals(body)).toBe(true);
    expect(result.status).toBe(201);
    expect(result.headers["x-upstream"]).toBe("yes");
    expect(result.body).toBe("\u0000\u0001\u0002\u00ff");
    expect(sim.records[0]).toMatchObject({ method: "MERGE", forwarded: true, status: 201, upstreamStatus: 201, fault: undefined });
    expect(sim.records[0]?.scope).toEqual({ service: "table", account: "devstoreaccount1", resource: "orders", partition: "a b" });
  });

  it("passes the target's headers through as it sent them, Connection and Keep-Alive included, with or without a fault that forwards", async () => {
    // A Keep-Alive unlike the 5 s Node announces for itself, so that only the target's can match.
    await withTarget(
      (_req, res) => res.writeHead(200, ["Connection", "keep-alive", "Keep-Alive", "timeout=7, max=50", "X-Upstream", "yes"]).end("ok"),
      async (target) => {
        const sim = await simulator({ target });
        const keepAlive = { path: ENTITY, headers: ["Connection", "keep-alive"] };
        const passed = answer(await send(sim.url, keepAlive));
        sim.addFault({ kind: "slow", delayInMs: 1 });
        const slowed = answer(await send(sim.url, keepAlive));
        for (const result of [passed, slowed]) {
          expect(result).toMatchObject({ status: 200, body: "ok" });
          expect(result.headers).toMatchObject({ connection: "keep-alive", "keep-alive": "timeout=7, max=50", "x-upstream": "yes" });
        }
      },
    );
  });

  it("passes a chunked answer through chunked, its body whole", async () => {
    await withTarget(
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("first,");
        res.end("second");
      },
      async (target) => {
        const sim = await simulator({ target });
        const result = answer(await send(sim.url, { path: ENTITY }));
        expect(result).toMatchObject({ status: 200, body: "first,second" });
        expect(result.headers["transfer-encoding"]).toBe("chunked");
      },
    );
  });

  it("keeps an idle client connection open (no keep-alive timeout to race a reused connection)", async () => {
    // A target that sends no Connection header, so the simulator's server writes its own: with a
    // keep-alive timeout it would add "Keep-Alive: timeout=5" (Node's default) and close the
    // connection then; a client reusing it at that moment would see "socket hang up".
    await withTarget(
      (_req, res) => {
        res.removeHeader("connection");
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      },
      async (target) => {
        const sim = await simulator({ target });
        const result = answer(await send(sim.url, { path: ENTITY, headers: ["Connection", "keep-alive"] }));
        expect(result.status).toBe(200);
        expect(result.headers.connection).toBe("keep-alive");
        expect(result.headers["keep-alive"]).toBeUndefined();
      },
    );
  });

  it("sends a request again, once, when the target closed the kept-alive connection it was sent on", async () => {
    // A target that answers the first request of each connection and closes the connection
    // unanswered on the next one, as a server closing an idle connection while it is reused.
    const perConnection = new WeakMap<object, number>();
    let closedUnanswered = 0;
    const target = createServer((req, res) => {
      const n = (perConnection.get(req.socket) ?? 0) + 1;
      perConnection.set(req.socket, n);
      if (n > 1) {
        closedUnanswered++;
        req.socket.destroy();
        return;
      }
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    try {
      const address = target.address();
      const sim = await simulator({ target: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}` });
      // The client's Connection header is forwarded: keep-alive, so the target keeps the connection.
      const keepAlive = { path: ENTITY, headers: ["Connection", "keep-alive"] };
      expect(answer(await send(sim.url, keepAlive)).status).toBe(200);
      // Once the first connection is back in the simulator's pool, its agent reuses it for the next
      // request; the target closes it; the request is sent again on a new connection.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(answer(await send(sim.url, keepAlive)).status).toBe(200);
      expect(closedUnanswered).toBe(1);
      expect(sim.count({ status: 200 })).toBe(2);
    } finally {
      target.closeAllConnections();
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  });

  it("answers 502 when the target is unreachable", async () => {
    const sim = await simulator({ target: "http://127.0.0.1:1" });
    expect(answer(await send(sim.url, { path: ENTITY })).status).toBe(502);
    expect(sim.records[0]).toMatchObject({ status: 502, forwarded: true });
  });

  it("records paths without SAS parameters and never the Authorization header", async () => {
    const seen: RequestRecord[] = [];
    const sim = await simulator({ onRecord: (record) => seen.push(record) });
    await send(sim.url, { path: "/devstoreaccount1/orders()?$top=1&sv=2023&sig=SECRET%3D", headers: ["Authorization", "SharedKey x:SECRET"] });
    expect(sim.records[0]?.path).toBe("/devstoreaccount1/orders()?$top=1");
    expect(seen).toEqual(sim.records);
    expect(JSON.stringify(sim.records)).not.toContain("SECRET");
  });

  it("records a plain x-ms-client-request-id, so a test can tell an operation's retries apart; anything else is left out", async () => {
    const sim = await simulator();
    const id = "0f3c9a52-7d1e-4b8a-9c55-2e6f1d0a7b13";
    await send(sim.url, { path: ENTITY, headers: ["x-ms-client-request-id", id] });
    await send(sim.url, { path: ENTITY, headers: ["x-ms-client-request-id", id] });
    await send(sim.url, { path: ENTITY, headers: ["x-ms-client-request-id", "<script>"] });
    await send(sim.url, { path: ENTITY, headers: ["x-ms-client-request-id", "a".repeat(129)] });
    await send(sim.url, { path: ENTITY });
    expect(sim.records.map((r) => r.clientRequestId)).toEqual([id, id, undefined, undefined, undefined]);
  });

  it("keeps at most maxRecords records and counts the rest in totals", async () => {
    const sim = await simulator({ maxRecords: 2 });
    for (let i = 0; i < 3; i++) await send(sim.url, { path: `/devstoreaccount1/t${i}` });
    expect(sim.records.map((r) => r.path)).toEqual(["/devstoreaccount1/t1", "/devstoreaccount1/t2"]);
    expect(sim.totals).toMatchObject({ requests: 3, forwarded: 3, dropped: 1 });
    sim.resetRecords();
    expect(sim.count()).toBe(0);
    expect(sim.totals.requests).toBe(0);
  });
});

describe("startRebalancingSimulator: faults", () => {
  it("answers Blob requests in XML, and HEAD without a body", async () => {
    const sim = await simulator({ service: "blob" });
    sim.addFault({ kind: "serverBusy", match: { resource: "photos", partition: "cat.png" }, retryAfter: { seconds: 2 } });
    const busy = answer(await send(sim.url, { method: "PUT", path: "/devstoreaccount1/photos/cat.png", body: "x" }));
    expect(busy.status).toBe(503);
    expect(busy.headers["content-type"]).toBe("application/xml");
    expect(busy.headers["x-ms-error-code"]).toBe("ServerBusy");
    expect(busy.headers["retry-after"]).toBe("2");
    expect(busy.body).toMatch(/<Error><Code>ServerBusy<\/Code><Message>The server is busy\./);
    const head = answer(await send(sim.url, { method: "HEAD", path: "/devstoreaccount1/photos/cat.png" }));
    expect(head.status).toBe(503);
    expect(head.body).toBe("");
    const other = answer(await send(sim.url, { method: "PUT", path: "/devstoreaccount1/photos/dog.png" }));
    expect(other.status).toBe(201);
    expect(received).toHaveLength(1);
  });

  it("sends the retry hint in the header asked for", async () => {
    const sim = await simulator();
    sim.addFault({ kind: "throttle", count: 1, retryAfter: { ms: 1234, header: "retry-after-ms" } });
    sim.addFault({ kind: "throttle", count: 1, retryAfter: { ms: 1234, header: "Retry-After" } });
    expect(answer(await send(sim.url, { path: ENTITY })).headers["retry-after-ms"]).toBe("1234");
    expect(answer(await send(sim.url, { path: ENTITY })).headers["retry-after"]).toBe("2");
  });

  it("resets the connection without forwarding on resetBeforeForward", async () => {
    const sim = await simulator();
    sim.addFault({ kind: "resetBeforeForward" });
    const result = await send(sim.url, { method: "POST", path: "/devstoreaccount1/orders", body: '{"PartitionKey":"p"}' });
    expect(result).toBeInstanceOf(Error);
    expect((result as NodeJS.ErrnoException).code).toBe("ECONNRESET");
    expect(received).toHaveLength(0);
    expect(sim.records[0]).toMatchObject({ fault: "resetBeforeForward", forwarded: false, scope: { partition: "p" } });
  });

  it("repeats the same faults for the same seed", async () => {
    const run = async (seed: number) => {
      const sim = await simulator({ seed });
      sim.addFault({ kind: "serverBusy", probability: 0.5 });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push(answer(await send(sim.url, { path: ENTITY })).status);
      return statuses;
    };
    const first = await run(99);
    expect(await run(99)).toEqual(first);
    expect(new Set(first)).toEqual(new Set([201, 503]));
  });

  it("rejects an invalid rule when it is added", async () => {
    const sim = await simulator();
    expect(() => sim.addFault({ kind: "status" })).toThrow(/rule\.status is required/);
  });
});

describe("startRebalancingSimulator: frozen endpoint and refused connections", () => {
  /** Whether `promise` is still pending after `ms`. */
  async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
    const marker = Symbol("pending");
    const winner = await Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(marker), ms))]);
    return winner === marker;
  }

  it("holds a frozen request unanswered and unforwarded until the rule ends, then resets its connection", async () => {
    const sim = await simulator();
    sim.addFault({ name: "frozen", kind: "freeze", durationInMs: 400 });
    const pending = send(sim.url, { path: ENTITY });
    await expect.poll(() => sim.totals.requests).toBe(1);
    expect(await pendingAfter(pending, 100)).toBe(true);
    const result = await pending;
    expect((result as NodeJS.ErrnoException).code).toBe("ECONNRESET");
    expect(received).toHaveLength(0);
    await expect.poll(() => sim.count({ fault: "freeze", ruleName: "frozen", forwarded: false, status: undefined })).toBe(1);
    // The rule has ended: the next request passes.
    expect(answer(await send(sim.url, { path: ENTITY })).status).toBe(201);
  });

  it("resets frozen requests at once when the rule is removed, and when the simulator stops", async () => {
    const sim = await simulator();
    const remove = sim.addFault({ kind: "freeze", durationInMs: 60_000 });
    const first = send(sim.url, { path: ENTITY });
    await expect.poll(() => sim.totals.requests).toBe(1);
    remove();
    expect(((await first) as NodeJS.ErrnoException).code).toBe("ECONNRESET");

    sim.addFault({ kind: "freeze", durationInMs: 60_000 });
    const second = send(sim.url, { path: ENTITY });
    await expect.poll(() => sim.totals.requests).toBe(2);
    await sim.stop();
    expect(await second).toBeInstanceOf(Error);
  });

  it("refuses connections for the rule's duration, then listens again on the same port", async () => {
    const sim = await simulator();
    const url = sim.url;
    sim.addFault({ kind: "refuseConnections", durationInMs: 300 });
    await new Promise((resolve) => setImmediate(resolve));
    const refused = await send(url, { path: ENTITY });
    expect((refused as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
    expect(sim.totals.requests).toBe(0);
    await expect.poll(async () => (await send(url, { path: ENTITY }) as Answer).status, { timeout: 3_000, interval: 50 }).toBe(201);
    expect(sim.url).toBe(url);
  });

  it("closes idle keep-alive connections when it starts refusing, and ends the refusal when the rule is removed", async () => {
    const sim = await simulator();
    const url = new URL(sim.url);
    const agent = new Agent({ keepAlive: true });
    let socketClosed: Promise<void> | undefined;
    await new Promise<void>((resolve) => {
      const outgoing = request({ host: url.hostname, port: url.port, path: ENTITY, agent }, (res) => {
        res.resume();
        res.on("end", () => resolve());
      });
      outgoing.on("socket", (socket) => {
        socketClosed = new Promise<void>((closed) => socket.once("close", () => closed()));
      });
      outgoing.end();
    });
    const remove = sim.addFault({ kind: "refuseConnections", durationInMs: 60_000 });
    await socketClosed;
    expect(((await send(sim.url, { path: ENTITY })) as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
    remove();
    await expect.poll(async () => (await send(sim.url, { path: ENTITY }) as Answer).status, { timeout: 3_000, interval: 50 }).toBe(201);
    agent.destroy();
  });

  it("stops while refusing without listening again", async () => {
    const sim = await simulator();
    sim.addFault({ kind: "refuseConnections", durationInMs: 60_000 });
    await new Promise((resolve) => setImmediate(resolve));
    await sim.stop();
    expect(((await send(sim.url, { path: ENTITY })) as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });
});

describe("startRebalancingSimulator: stop", () => {
  it("cancels pending delays, closes open connections and stops listening", async () => {
    const sim = await simulator();
    sim.addFault({ kind: "operationTimedOut", delayInMs: 60_000 });
    const pending = send(sim.url, { path: ENTITY });
    await expect.poll(() => sim.count()).toBe(1);
    const startedAt = performance.now();
    await Promise.all([sim.stop(), sim.stop()]);
    // Far below the 60 s delay it cancels; not a speed figure (a loaded machine takes its time).
    expect(performance.now() - startedAt).toBeLessThan(10_000);
    expect(await pending).toBeInstanceOf(Error);
    const after = await send(sim.url, { path: ENTITY });
    expect((after as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("closes idle keep-alive connections", async () => {
    const sim = await simulator();
    const url = new URL(sim.url);
    const agent = new Agent({ keepAlive: true });
    let socketClosed: Promise<void> | undefined;
    await new Promise<void>((resolve) => {
      const outgoing = request({ host: url.hostname, port: url.port, path: ENTITY, agent }, (res) => {
        res.resume();
        res.on("end", () => resolve());
      });
      outgoing.on("socket", (socket) => {
        socketClosed = new Promise<void>((closed) => socket.once("close", () => closed()));
      });
      outgoing.end();
    });
    expect(sim.count({ status: 201 })).toBe(1);
    await sim.stop();
    await socketClosed;
    agent.destroy();
  });
});

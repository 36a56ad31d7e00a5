import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { Registry, register, type OpenMetricsContentType } from "prom-client";
import { createMetricsObserver, metricsHandler, startMetricsServer } from "../../../src/index.js";
import type { MetricsServer } from "../../../src/metrics/metricsServer.js";

const servers: MetricsServer[] = [];
const plainServers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(plainServers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function start(options: Parameters<typeof startMetricsServer>[0]): Promise<MetricsServer> {
  const server = await startMetricsServer(options);
  servers.push(server);
  return server;
}

describe("startMetricsServer", () => {
  it("serves the registry at /metrics on 127.0.0.1 with Prometheus's content type", async () => {
    const registry = new Registry();
    createMetricsObserver("table", { registry });
    const server = await start({ port: 0, registry });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/metrics`);
    const response = await fetch(server.url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await response.text()).toContain("# TYPE azure_storage_operations_total counter");
  });

  it("answers 404 off its path, 405 to other methods, headers only to HEAD", async () => {
    const server = await start({ port: 0, registry: new Registry(), path: "/custom" });
    expect(server.url.endsWith("/custom")).toBe(true);
    expect((await fetch(server.url.replace("/custom", "/metrics"))).status).toBe(404);
    expect((await fetch(`${server.url}?x=1`)).status).toBe(200);
    const post = await fetch(server.url, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await fetch(server.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("uses the OpenMetrics content type of an OpenMetrics registry", async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    createMetricsObserver("table", { registry });
    const server = await start({ port: 0, registry });
    const response = await fetch(server.url);
    expect(response.headers.get("content-type")).toBe(Registry.OPENMETRICS_CONTENT_TYPE);
    const text = await response.text();
    expect(text).toContain("# TYPE azure_storage_operations counter");
    expect(text.endsWith("# EOF\n")).toBe(true);
  });

  it("defaults to prom-client's default registry; close() is idempotent and frees the port", async () => {
    register.clear();
    createMetricsObserver("queue");
    const server = await start({ port: 0 });
    expect(await (await fetch(server.url)).text()).toContain("azure_storage_attempts_total");
    await server.close();
    await server.close();
    await expect(fetch(server.url)).rejects.toThrow();
    register.clear();
  });

  it.each([
    [{ port: -1 }, /port must be between 0 and 65535; got -1/],
    [{ port: 1.5 }, /port must be an integer/],
    [{ host: "" }, /host must be a non-empty string/],
    [{ path: "metrics" }, /path must be a string starting with "\/"/],
    [{ registry: {} }, /registry must be a prom-client Registry/],
    [{ registry: null }, /registry must be a prom-client Registry/],
    [{ host: null }, /host must be a non-empty string; got null/],
    [{ path: null }, /path must be a string starting with "\/"; got null/],
    [{ path: 10n }, /path must be a string starting with "\/"; got 10n/],
    [{ port: 10n }, /port must be a number; got 10n/],
    [{ prot: 1 }, /^prot is not a known option of startMetricsServer/],
  ])("rejects %o", async (options, message) => {
    await expect(startMetricsServer(options as never)).rejects.toThrow(message);
  });

  it.each([
    ["connects and sends nothing", ""],
    ["sends half a request line", "GET /met"],
    ["never finishes its headers", "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"],
  ])("close() ends although a client %s, and cuts that client off", async (_what, sent) => {
    const server = await startMetricsServer({ port: 0, registry: new Registry() });
    const client = await rawClient(server.port, sent);
    const clientClosed = new Promise<void>((resolve) => client.once("close", () => resolve()));
    // Before the fix this never settled: vitest's test timeout caught it.
    await server.close();
    await clientClosed;
    expect(client.destroyed).toBe(true);
  });

  it("close() lets a scrape under way finish before it ends", async () => {
    const registry = new Registry();
    let collecting!: () => void;
    const collected = new Promise<void>((resolve) => (collecting = resolve));
    let finishCollecting!: (text: string) => void;
    registry.metrics = () => {
      collecting();
      return new Promise<string>((resolve) => (finishCollecting = resolve));
    };
    const server = await startMetricsServer({ port: 0, registry });
    const scrape = fetch(server.url);
    await collected;
    const closed = server.close();
    finishCollecting("# a slow registry\n");
    const response = await scrape;
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("# a slow registry\n");
    await closed;
  });

  it("rejects when the port is taken", async () => {
    const first = await start({ port: 0, registry: new Registry() });
    await expect(startMetricsServer({ port: first.port, registry: new Registry() })).rejects.toThrow(/EADDRINUSE/);
  });
});

/** A raw TCP client on loopback that has sent `data` (possibly nothing) and then stays silent. */
async function rawClient(port: number, data: string): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {}); // the server cutting it off may surface as ECONNRESET
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  if (data !== "") await new Promise<void>((resolve) => socket.write(data, () => resolve()));
  return socket;
}

describe("metricsHandler", () => {
  it("plugs into a node:http server", async () => {
    const registry = new Registry();
    createMetricsObserver("blob", { registry });
    const server = createServer(metricsHandler(registry));
    plainServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const response = await fetch(`http://127.0.0.1:${port}/anything`);
    expect(response.headers.get("content-type")).toBe(registry.contentType);
    expect(await response.text()).toContain("azure_storage_retries_total");
  });

  it("answers 500 without details when collecting fails", async () => {
    const registry = new Registry();
    registry.metrics = () => Promise.reject(new Error("secret detail"));
    const server = createServer(metricsHandler(registry));
    plainServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain("secret");
  });
});

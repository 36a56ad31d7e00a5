import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Registry, RegistryContentType } from "prom-client";
import { logger } from "../logging/logger.js";
import { safeErrorName } from "../logging/safeErrorCode.js";
import { numberOption, optionsObject, optionWhere, type OptionsShape } from "../validation/optionSchema.js";
import { defaultRegistry } from "./optionalPeer.js";

/**
 * A `node:http` request listener (Express and Connect accept it as a route handler too) that answers GET and HEAD with the registry's exposition text and its content
 * type (`text/plain; version=0.0.4` or OpenMetrics, as the registry is set up); other methods
 * get 405. `registry` defaults to prom-client's default registry.
 *
 * @example
 * app.get("/metrics", metricsHandler(registry));
 */
export function metricsHandler(registry: Registry<RegistryContentType> = defaultRegistry("metricsHandler() without a registry")): (request: IncomingMessage, response: ServerResponse) => void {
  if (typeof registry?.metrics !== "function") throw new TypeError("registry must be a prom-client Registry.");
  return (request, response) => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" });
      response.end("Method Not Allowed\n");
      return;
    }
    registry.metrics().then(
      (body) => {
        response.writeHead(200, { "Content-Type": registry.contentType, "Content-Length": Buffer.byteLength(body) });
        response.end(request.method === "HEAD" ? undefined : body);
      },
      (error: unknown) => {
        logger.warning(`Collecting metrics failed: ${safeErrorName(error)}`);
        if (!response.headersSent) response.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
        response.end("Collecting metrics failed\n");
      },
    );
  };
}

/** Options of {@link startMetricsServer} (documented on its parameter). */
type MetricsServerOptions = NonNullable<Parameters<typeof startMetricsServer>[0]>;

/** A running metrics endpoint, as {@link startMetricsServer} resolves it (inferred: the public API names no more types than it must). */
export type MetricsServer = Awaited<ReturnType<typeof startMetricsServer>>;

/** Defaults of {@link startMetricsServer}. */
export const DEFAULT_METRICS_SERVER_OPTIONS = Object.freeze({
  port: 9464,
  host: "127.0.0.1",
  path: "/metrics",
});

const d = DEFAULT_METRICS_SERVER_OPTIONS;
const checkOptions = optionsObject(
  {
    port: numberOption({ max: 65_535, integer: true }, d.port),
    host: optionWhere<string>((v) => typeof v === "string" && v !== "", "a non-empty string", d.host),
    // Checked by metricsHandler, which names it.
    registry: (value) => value as Registry<RegistryContentType> | undefined,
    path: optionWhere<string>((v) => typeof v === "string" && v.startsWith("/"), 'a string starting with "/"', d.path),
  } satisfies OptionsShape<MetricsServerOptions>,
  { root: "startMetricsServer options", owner: "startMetricsServer" },
);

/** How long `close()` lets connections with a request under way finish before cutting them. */
const CLOSE_GRACE_IN_MS = 1_000;
/** A scrape's headers arrive at once; a client that trickles them is cut off (Node's default is 60 s). */
const HEADERS_TIMEOUT_IN_MS = 10_000;
/** The same for a whole request (Node's default is 300 s). */
const REQUEST_TIMEOUT_IN_MS = 30_000;

/**
 * Starts a small `node:http` server exposing `registry` at `path`, for apps that do not
 * already run one. Resolves once it listens, with the running endpoint.
 *
 * @example
 * const server = await startMetricsServer({ port: 9464 });
 * // scrape server.url; on shutdown:
 * await server.close();
 */
export async function startMetricsServer(
  options: {
    /** TCP port; 0 picks a free one (read it from the result). Defaults to 9464. */
    port?: number;
    /** Interface to listen on. Defaults to `"127.0.0.1"`: exposing metrics beyond the host is a choice to make. */
    host?: string;
    /** The registry to expose. Defaults to prom-client's default registry. */
    registry?: Registry<RegistryContentType>;
    /** The path that serves metrics; every other path gets 404. Defaults to `"/metrics"`. */
    path?: string;
  } = {},
): Promise<{
  /** The scrape URL, e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  /** The port actually bound. */
  readonly port: number;
  /**
   * Stops listening, closes idle connections at once and every other one after a grace
   * period of 1 s (a scrape in flight may finish; a client that never completes its request
   * cannot hold shutdown). Idempotent.
   */
  close(): Promise<void>;
}> {
  const { port, host, registry, path } = checkOptions(options, "");
  const handler = metricsHandler(registry === undefined ? defaultRegistry("startMetricsServer() without a registry") : registry);

  const server = createServer({ headersTimeout: HEADERS_TIMEOUT_IN_MS, requestTimeout: REQUEST_TIMEOUT_IN_MS }, (request, response) => {
    // The scrape's own request path, not a storage URL: the address module (src/address/) has nothing to say about it.
    const requestPath = (request.url ?? "/").split("?", 1)[0];
    if (requestPath === path) {
      handler(request, response);
      return;
    }
    response.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
    response.end("Not Found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === "object" && address !== null ? address.port : port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${boundPort}${path}`,
    port: boundPort,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve, reject) => {
        // Idle keep-alive connections go at once. A client that connected and sent nothing, or
        // half a request, counts as busy to node:http and would hold close() forever: a
        // scrape in flight gets a grace period to finish, then every connection is cut.
        const cutOff = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_IN_MS).unref();
        server.close((error) => {
          clearTimeout(cutOff);
          if (error) reject(error);
          else resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry, RegistryContentType } from "prom-client";
import { defaultRegistry } from "./defaultRegistry.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";

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
        logger.warning(`Collecting metrics failed: ${safeErrorCode((error as Error | undefined)?.name) ?? "error"}`);
        if (!response.headersSent) response.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
        response.end("Collecting metrics failed\n");
      },
    );
  };
}

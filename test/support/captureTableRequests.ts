import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../src/testing/azurite/devstoreAccount.js";

/** A request as the real SDK put it on the wire, seen by a stub HttpClient. */
export interface CapturedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Runs `action` against a real `TableClient` whose HttpClient only records requests and
 * answers 500, so tests see exactly what @azure/data-tables sends (URLs, `$batch`
 * bodies) without a server. Errors from the canned answer are swallowed.
 */
export async function captureTableRequests(
  action: (client: TableClient) => Promise<unknown>,
  options: { endpoint?: string; table?: string } = {},
): Promise<CapturedRequest[]> {
  const captured: CapturedRequest[] = [];
  const httpClient: HttpClient = {
    async sendRequest(request: PipelineRequest) {
      captured.push({ method: request.method, url: request.url, headers: request.headers.toJSON(), body: bodyText(request) });
      return { request, status: 500, headers: createHttpHeaders({}), bodyAsText: "" };
    },
  };
  const client = new TableClient(
    options.endpoint ?? `http://127.0.0.1:10002/${DEVSTORE_ACCOUNT_NAME}`,
    options.table ?? "orders",
    new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY),
    { httpClient, allowInsecureConnection: true, retryOptions: { maxRetries: 0 } },
  );
  try {
    await action(client);
  } catch {
    // The canned 500 makes every call fail; only the captured request matters.
  }
  return captured;
}

function bodyText(request: PipelineRequest): string | undefined {
  const body = request.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString("utf8");
  return undefined;
}

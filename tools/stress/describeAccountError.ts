/**
 * A one-line explanation of why the account could not be used, from an error's status and
 * code only (messages can quote URLs and request details). Pure; never includes secrets.
 */
export function describeAccountError(error: unknown, host: string): string {
  const candidate = error as { statusCode?: unknown; code?: unknown; name?: unknown; details?: { errorCode?: unknown } } | null;
  const status = typeof candidate?.statusCode === "number" ? candidate.statusCode : undefined;
  const rawCode = candidate?.details?.errorCode ?? candidate?.code;
  const code = typeof rawCode === "string" && /^[A-Za-z0-9_]+$/.test(rawCode) ? rawCode : undefined;
  if (status === 401 || status === 403) {
    return `The account at ${host} refused the request (HTTP ${status}${code === undefined ? "" : ` ${code}`}): check the account key or SAS in the connection string.`;
  }
  if (status === 404) return `${host} answered 404${code === undefined ? "" : ` ${code}`}: check the account name and the Table endpoint.`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `Cannot resolve ${host} (${code}): check the account name or endpoint.`;
  if (code === "ECONNREFUSED") return `Nothing accepts connections at ${host} (ECONNREFUSED): is the endpoint right, and the service up?`;
  if (code === "ETIMEDOUT" || candidate?.name === "TimeoutError") return `${host} did not answer in time (${code ?? "timeout"}).`;
  if (status !== undefined) return `The account at ${host} answered HTTP ${status}${code === undefined ? "" : ` ${code}`}.`;
  return `Cannot reach the account at ${host}${code === undefined ? "" : ` (${code})`}.`;
}

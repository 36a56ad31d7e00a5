/**
 * `method.toUpperCase()`, without building a string for the methods the SDKs send, which
 * are upper-case already: this runs on every request (naming, scoping, write detection).
 */
export function upperCaseMethod(method: string): string {
  switch (method) {
    case "GET":
    case "PUT":
    case "POST":
    case "DELETE":
    case "PATCH":
    case "MERGE":
    case "HEAD":
    case "OPTIONS":
      return method;
    default:
      return method.toUpperCase();
  }
}

/** True for methods that change state (everything but GET, HEAD, OPTIONS). */
export function isWriteMethod(method: string): boolean {
  const m = upperCaseMethod(method);
  return m !== "GET" && m !== "HEAD" && m !== "OPTIONS";
}

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

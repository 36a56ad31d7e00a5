import { upperCaseMethod } from "../partition/upperCaseMethod.js";

/** True for methods that change state (everything but GET, HEAD, OPTIONS). */
export function isWriteMethod(method: string): boolean {
  const m = upperCaseMethod(method);
  return m !== "GET" && m !== "HEAD" && m !== "OPTIONS";
}

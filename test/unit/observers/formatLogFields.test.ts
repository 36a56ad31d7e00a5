import { describe, expect, it } from "vitest";
import { formatLogFields, MAX_LOG_VALUE_CHARS } from "../../../src/observers/retryLogObserver.js";

describe("formatLogFields", () => {
  it.each([
    [{ operation: "upload_blob", attempt: 1 }, "operation=upload_blob attempt=1"],
    [{ a: undefined, b: "x" }, "b=x"],
    [{ delayInMs: 12.6 }, "delayInMs=13"],
    [{ scope: "blob|acct|photos|cat.jpg" }, 'scope="blob|acct|photos|cat.jpg"'],
    [{ scope: "table|acct|orders|a b" }, 'scope="table|acct|orders|a b"'],
    // A key with a newline cannot start a second, forged log line.
    [{ scope: "x\nRetrying: attempt=99" }, 'scope="x\\nRetrying: attempt=99"'],
    [{ scope: 'say "hi"' }, 'scope="say \\"hi\\""'],
    [{ code: "a=b" }, 'code="a=b"'],
  ])("%j -> %s", (fields, expected) => {
    expect(formatLogFields(fields)).toBe(expected);
  });

  it("cuts long values", () => {
    const line = formatLogFields({ scope: "b".repeat(MAX_LOG_VALUE_CHARS + 50) });
    expect(line).toBe(`scope=${"b".repeat(MAX_LOG_VALUE_CHARS)}...`);
  });
});

import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_ERROR_CODE_LENGTH, UNRECOGNISED_ERROR_CODE, safeErrorCode } from "../../../src/logging/safeErrorCode.js";

describe("safeErrorCode", () => {
  it.each(["ServerBusy", "OperationTimedOut", "ECONNRESET", "UND_ERR_SOCKET", "RestError", "x-1.2", "A".repeat(MAX_ERROR_CODE_LENGTH)])(
    "passes %s as it is",
    (code) => {
      expect(safeErrorCode(code)).toBe(code);
    },
  );

  it.each([
    ["", "empty"],
    ["A".repeat(MAX_ERROR_CODE_LENGTH + 1), "too long"],
    ["sv=2024-08-04&sig=c2VjcmV0", "a query string"],
    ["Server Busy", "a space"],
    ["Busy\nforged", "a newline"],
    ['Busy"', "a quote"],
    ["Bérénice", "non-ASCII"],
    ["Busy<script>", "markup"],
  ])("replaces %j (%s) with the placeholder", (value) => {
    expect(safeErrorCode(value)).toBe(UNRECOGNISED_ERROR_CODE);
  });

  it("leaves undefined alone and replaces every other non-string", () => {
    expect(safeErrorCode(undefined)).toBeUndefined();
    for (const value of [null, 5, 10n, {}, [], Symbol.for("x"), () => "ServerBusy"]) expect(safeErrorCode(value)).toBe(UNRECOGNISED_ERROR_CODE);
  });

  it("never returns anything but the input or the placeholder, and the input only when short and plain", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (value) => {
        const safe = safeErrorCode(value);
        if (safe === UNRECOGNISED_ERROR_CODE) return;
        expect(safe).toBe(value);
        expect(value.length).toBeLessThanOrEqual(MAX_ERROR_CODE_LENGTH);
        expect(value).toMatch(/^[A-Za-z0-9._-]+$/);
      }),
    );
  });
});

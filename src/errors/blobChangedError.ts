import { hasCodeAndName, ResilienceError } from "./resilienceError.js";

/**
 * A blob download's body was cut, and the blob was no longer the version the download began
 * with when the rest was asked for (the resumed request, conditioned on the first answer's
 * ETag, was answered 412 ConditionNotMet, or 404 for a blob deleted meanwhile). The download
 * stops here rather than splice two versions: every byte the caller received is of the first
 * version, and none of the second. Download the blob again. `cause` is the resumed answer's
 * `RestError`.
 */
export class BlobChangedError extends ResilienceError {
  /** Bytes of the first version the caller's stream received before it stopped. */
  readonly receivedBytes: number;

  constructor(receivedBytes: number, options?: { cause?: unknown }) {
    super(
      "BLOB_CHANGED",
      `The blob changed (or was deleted) while it was being downloaded: its body was cut after ${receivedBytes} bytes, and the rest ` +
        "could no longer be read from the same version (ETag), so the download stopped rather than mix two versions. Download it again.",
      options,
    );
    this.name = "BlobChangedError";
    this.receivedBytes = receivedBytes;
  }
}

/** True for a {@link BlobChangedError}, even from another copy of the package. */
export function isBlobChangedError(error: unknown): error is BlobChangedError {
  return hasCodeAndName(error, "BLOB_CHANGED", "BlobChangedError");
}

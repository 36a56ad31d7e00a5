/** The Azure Storage services the package knows. */
export type StorageService = "table" | "blob" | "queue";

/** Every {@link StorageService}. */
export const STORAGE_SERVICES: readonly StorageService[] = ["table", "blob", "queue"];

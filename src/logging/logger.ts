import { createClientLogger } from "@azure/logger";

/**
 * The package's logger, under the Azure SDK's logging switch: `AZURE_LOG_LEVEL=info`
 * shows each retry, `warning` shows give-ups and breaker transitions. Never log headers,
 * URLs with query strings, or bodies: they can carry keys and SAS signatures.
 */
export const logger = createClientLogger("storage-resilience");

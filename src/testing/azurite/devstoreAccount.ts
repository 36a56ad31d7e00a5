/** The account name every Azurite instance serves. */
export const DEVSTORE_ACCOUNT_NAME = "devstoreaccount1";

/**
 * Azurite's well-known development key, published in its README and identical on every
 * install; it protects nothing. Still kept out of logs and error messages, so that
 * code copied from here to a real account does not learn to print keys.
 */
export const DEVSTORE_ACCOUNT_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

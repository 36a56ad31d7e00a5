// Imports nothing, so that an old Node reads this before anything that might not load on it.

/** The oldest Node.js major the command runs on: package.json `engines` says ">=22". */
export const MIN_NODE_MAJOR = 22;

/**
 * One line refusing a Node.js older than {@link MIN_NODE_MAJOR}, given `process.versions.node`;
 * undefined when it is supported. Node 20 left maintenance in April 2026, and the package is
 * neither built nor tested for it. Pure.
 */
export function unsupportedNodeMessage(version: string): string | undefined {
  const major = Number.parseInt(version, 10);
  if (Number.isInteger(major) && major >= MIN_NODE_MAJOR) return undefined;
  return `azure-storage-resilience needs Node.js ${MIN_NODE_MAJOR} or later; this is Node.js ${version}.`;
}

/** Packages the demo needs beyond the library: optional peers of azure-storage-resilience. */
export const DEMO_PACKAGES = ["@azure/data-tables", "azurite"] as const;
/** The stress test's: Azurite only when it runs against the embedded emulator. */
export const STRESS_PACKAGES = ["@azure/data-tables"] as const;

/**
 * The names among `packages` that cannot be resolved from the CLI's own location (where
 * Node will look when the command imports them). `resolve` is injected for tests.
 */
export function missingPackages(packages: readonly string[], resolve: (name: string) => unknown = (name) => import.meta.resolve(name)): string[] {
  return packages.filter((name) => {
    try {
      resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * One line saying what `command` needs and how to install it: in a project, or, for a
 * one-off `npx` run (npx installs no optional peers), with `-p` for each package.
 */
export function describeMissingPackages(command: string, program: string, missing: readonly string[]): string {
  const names = missing.join(" ");
  const npx = [program, ...missing].map((name) => `-p ${name}`).join(" ");
  return `${command} needs ${missing.join(" and ")}, not installed here: npm install --save-dev ${names} (or: npx ${npx} ${program} ${command})`;
}

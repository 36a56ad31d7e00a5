import { spawnSync } from "node:child_process";

/**
 * The variable `.ci/run` sets so that a missing Prometheus fails the run instead of skipping
 * its tests: on a developer's machine `npm test` must pass without it, CI must not lose them.
 */
export const REQUIRE_PROMETHEUS_ENV = "REQUIRE_PROMETHEUS";

const INSTALL_HINT =
  "install Debian's prometheus package (apt-get install -y prometheus), which ships both promtool and prometheus, or run .ci/run as root";

/** True when `command` runs (`command --version`); false only when it is not on PATH. */
export function isOnPath(command: string): boolean {
  const result = spawnSync(command, ["--version"], { encoding: "utf8", timeout: 30_000 });
  return (result.error as NodeJS.ErrnoException | undefined)?.code !== "ENOENT";
}

/**
 * Whether the tests needing the Prometheus `commands` must be skipped here. Missing commands
 * print a visible notice naming what to install; with `REQUIRE_PROMETHEUS=1` (set by `.ci/run`)
 * they throw instead, so CI fails rather than silently skipping.
 */
export function skipWithoutPrometheus(commands: readonly string[], suite: string): boolean {
  const missing = commands.filter((command) => !isOnPath(command));
  if (missing.length === 0) return false;
  const what = `${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not on PATH`;
  if (process.env[REQUIRE_PROMETHEUS_ENV] === "1") {
    throw new Error(`${suite}: ${what} and ${REQUIRE_PROMETHEUS_ENV}=1 requires it: ${INSTALL_HINT}.`);
  }
  console.warn(`SKIPPED ${suite}: ${what}. To run these tests, ${INSTALL_HINT}.`);
  return true;
}

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, cpus, totalmem } from "node:os";

/** Where the figures were measured. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryInGb: number;
  node: string;
  platform: string;
  packages: Record<string, string>;
  /** The commit measured, and how many files under src/ differed from it (a shared working tree). */
  commit: string;
  uncommittedSourceFiles: number;
}

const PACKAGES = ["@azure/core-rest-pipeline", "@azure/data-tables", "@azure/storage-queue", "cockatiel", "prom-client", "azurite"];

/** The CPU model (from /proc/cpuinfo where there is one), core count, Node and package versions. */
export function machineInfo(): MachineInfo {
  return {
    cpu: cpuModel(),
    cores: availableParallelism(),
    memoryInGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    packages: Object.fromEntries(PACKAGES.map((name) => [name, packageVersion(name)])),
    ...sourceState(),
  };
}

function sourceState(): { commit: string; uncommittedSourceFiles: number } {
  const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  try {
    const changed = git("status", "--porcelain", "--", "src");
    return { commit: git("rev-parse", "--short", "HEAD"), uncommittedSourceFiles: changed === "" ? 0 : changed.split("\n").length };
  } catch {
    return { commit: "unknown", uncommittedSourceFiles: 0 };
  }
}

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line !== undefined) return line.slice(line.indexOf(":") + 1).trim();
  } catch {
    // Not Linux: fall back to what os.cpus() reports.
  }
  return cpus()[0]?.model ?? "unknown";
}

function packageVersion(name: string): string {
  try {
    const require = createRequire(import.meta.url);
    const manifest = require(`${name}/package.json`) as { version?: string };
    return manifest.version ?? "unknown";
  } catch {
    return "unknown";
  }
}

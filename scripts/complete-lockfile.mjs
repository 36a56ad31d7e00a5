// Puts back the lockfile entries of rollup's per-platform native packages. The registry this
// project's machines reach serves only the linux builds, so `npm install` here writes a
// lockfile without the others, and `npm ci` then refuses it ("Missing: @rollup/rollup-... from
// lock file"). Run `node scripts/complete-lockfile.mjs` after any `npm install` that changed
// package-lock.json. Entries carry version, os, cpu and libc (what npm needs to skip them on
// other platforms); npm fetches and checks the package itself where it is installed.
import { readFileSync, writeFileSync } from "node:fs";

const LOCKFILE = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(LOCKFILE, "utf8"));
const packages = lock.packages;

/** `linux-arm64-musl` -> os linux, cpu arm64, libc musl; `win32-x64-msvc` -> os win32, cpu x64. */
function platformOf(suffix) {
  const [os, cpu, abi] = suffix.split("-");
  const libc = os === "linux" ? (abi?.startsWith("musl") ? "musl" : "glibc") : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  if (!path.endsWith("node_modules/rollup") || !entry.optionalDependencies) continue;
  for (const [name, version] of Object.entries(entry.optionalDependencies)) {
    const key = `node_modules/${name}`;
    const suffix = name.startsWith("@rollup/rollup-") ? name.slice("@rollup/rollup-".length) : undefined;
    if (packages[key] !== undefined || suffix === undefined) continue;
    const { os, cpu, libc } = platformOf(suffix);
    packages[key] = { version, cpu: [cpu], dev: true, ...(libc ? { libc: [libc] } : {}), license: "MIT", optional: true, os: [os] };
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(LOCKFILE, JSON.stringify(lock, null, 2) + "\n");
console.log(`complete-lockfile: added ${added} platform entr${added === 1 ? "y" : "ies"}.`);

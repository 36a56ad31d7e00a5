// `npm run bench`: runs every benchmark, writes bench/results/latest.json, and regenerates
// the tables in docs/benchmarks.md and the docs/bench-*.svg charts from it.
//   npm run bench                         full run (about 40 minutes on 2 cores), writes results and docs
//   npm run bench -- --report-only        regenerates docs from bench/results/latest.json
//   npm run bench -- --only=overhead      runs some benchmarks, prints JSON, writes nothing
//   npm run bench -- --smoke              tiny settings, prints JSON, writes nothing
//   npm run bench -- --only=NAME --merge  runs some benchmarks and puts their results into
//                                         bench/results/latest.json (the rest kept, and the come-back
//                                         parts not run), then writes docs
//   npm run bench -- --only=comeback --seeds=3 --faults=throttle,frozen --configs=package,sdk-default --parts=faults
//                                         the come-back benchmark, narrowed: --seeds=N, --first-seed=N,
//                                         --faults= (throttle, frozen, refused, rebalancing),
//                                         --configs= (package, sdk-default, no-retry), --parts= (faults,
//                                         pool, busy), --together (configurations side by side: faster,
//                                         but three times the load; see bench/comeBack.ts),
//                                         --records (every operation's record in the JSON)
//   npm run bench -- --only=family --seeds=2 --first-seed=5 --configs=package,sdk-default
//                                         the fault family (issue 36), narrowed: --seeds=N (20 by
//                                         default), --first-seed=N, --configs=, --records; with
//                                         --merge, into latest.json and docs/benchmarks.md section 10
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { applySections, renderCharts, renderSections, type BenchResults } from "./report.js";
import { BENCHMARKS, runBenchmarks, type BenchmarkName } from "./runBenchmarks.js";
import { mergeComeBack, type ComeBackConfiguration, type ComeBackFault, type ComeBackOverrides, type ComeBackPart } from "./comeBack.js";
import type { FamilyConfiguration, FamilyOverrides } from "./faultFamily.js";

const ROOT = new URL("../", import.meta.url);
const RESULTS = fileURLToPath(new URL("bench/results/latest.json", ROOT));
const DOC = fileURLToPath(new URL("docs/benchmarks.md", ROOT));
const COMMAND = "npm run bench";

// If something still ends the run, say what it was and which request it belonged to.
process.on("uncaughtExceptionMonitor", (error, origin) => {
  const request = (error as { request?: { method?: string; url?: string } }).request;
  console.error(`bench: ${origin}: ${error?.name} ${(error as { code?: string }).code ?? ""} ${request ? `${request.method} ${request.url?.split("?")[0]}` : ""}`);
});

// A SIGTERM or SIGINT the program does not handle ends Node without its `exit` event, and so
// without startAzurite's exit hook, which kills the Azurite it started: exit through it instead.
for (const [name, number] of [["SIGINT", 2], ["SIGTERM", 15]] as const) {
  process.once(name, () => {
    console.error(`bench: ${name}, stopping`);
    process.exit(128 + number);
  });
}

const args = process.argv.slice(2);

// A flag misspelt, or `--help`, must not start the full run (about 40 minutes) as if none were given.
const KNOWN = ["report-only", "only", "smoke", "merge", "seeds", "first-seed", "faults", "configs", "parts", "together", "records"];
const USAGE = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\nimport ")[0]!.replace(/^\/\/ ?/gm, "");
if (args.includes("--help") || args.includes("-h")) {
  console.log(USAGE);
  process.exit(0);
}
for (const arg of args) {
  const name = /^--([a-z-]+)(=.*)?$/.exec(arg)?.[1];
  if (name === undefined || !KNOWN.includes(name)) {
    console.error(`bench: unknown argument ${JSON.stringify(arg)}; known: ${KNOWN.map((k) => `--${k}`).join(", ")} (npm run bench -- --help)`);
    process.exit(2);
  }
}
const flag = (name: string) => args.includes(`--${name}`);
const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(`--${name}=`.length);
const onlyArg = value("only");
const list = (name: string) => value(name)?.split(",");
const integer = (name: string) => (value(name) === undefined ? undefined : Number(value(name)));

/** The come-back benchmark's flags; comeBackSettings checks each value. */
function comeBackOverrides(): ComeBackOverrides {
  const overrides: ComeBackOverrides = {};
  if (integer("seeds") !== undefined) overrides.seeds = integer("seeds");
  if (integer("first-seed") !== undefined) overrides.firstSeed = integer("first-seed");
  if (list("faults") !== undefined) overrides.faults = list("faults") as ComeBackFault[];
  if (list("configs") !== undefined) overrides.configurations = list("configs") as ComeBackConfiguration[];
  if (list("parts") !== undefined) overrides.parts = list("parts") as ComeBackPart[];
  if (flag("together")) overrides.together = true;
  if (flag("records")) overrides.keepRecords = true;
  return overrides;
}

/** The fault family's flags (the come-back benchmark's names); familySettings checks each value. */
function familyOverrides(): FamilyOverrides {
  const overrides: FamilyOverrides = {};
  if (integer("seeds") !== undefined) overrides.seeds = integer("seeds");
  if (integer("first-seed") !== undefined) overrides.firstSeed = integer("first-seed");
  if (list("configs") !== undefined) overrides.configurations = list("configs") as FamilyConfiguration[];
  if (flag("records")) overrides.keepRecords = true;
  return overrides;
}

function writeDocs(results: BenchResults): void {
  const current = existsSync(DOC) ? readFileSync(DOC, "utf8") : "# Benchmarks\n";
  writeFileSync(DOC, applySections(current, renderSections(results)));
  for (const [file, svg] of Object.entries(renderCharts(results))) writeFileSync(fileURLToPath(new URL(`docs/${file}`, ROOT)), svg);
  console.log(`wrote ${DOC} and ${Object.keys(renderCharts(results)).join(", ")}`);
}

if (flag("report-only")) {
  writeDocs(JSON.parse(readFileSync(RESULTS, "utf8")) as BenchResults);
} else {
  const only = onlyArg?.split(",").map((name) => {
    if (!(BENCHMARKS as readonly string[]).includes(name)) throw new Error(`--only takes ${BENCHMARKS.join(", ")}; got ${JSON.stringify(name)}.`);
    return name as BenchmarkName;
  });
  const smoke = flag("smoke");
  const results = await runBenchmarks({ smoke, only, command: COMMAND, comeBack: comeBackOverrides(), family: familyOverrides(), log: (line) => console.error(line) });
  if (!smoke && only !== undefined && flag("merge")) {
    // Only the benchmarks' own keys: the machine section keeps describing the full run.
    const { schema: _schema, startedAt: _startedAt, elapsedInMs: _elapsed, command: _command, smoke: _smoke, machine: _machine, unhandledRejections, ...ran } = results;
    const kept = JSON.parse(readFileSync(RESULTS, "utf8")) as BenchResults;
    const merged = { ...kept, ...ran };
    if (ran.comeBack !== undefined) merged.comeBack = mergeComeBack(kept.comeBack, ran.comeBack);
    if (unhandledRejections !== undefined && unhandledRejections.length > 0) merged.unhandledRejections = [...(merged.unhandledRejections ?? []), ...unhandledRejections];
    writeFileSync(RESULTS, JSON.stringify(merged, null, 2) + "\n");
    console.log(`merged ${only.join(", ")} into ${RESULTS}`);
    writeDocs(merged);
  } else if (smoke || only !== undefined) {
    console.log(JSON.stringify(results, null, 2));
  } else {
    mkdirSync(fileURLToPath(new URL("bench/results/", ROOT)), { recursive: true });
    writeFileSync(RESULTS, JSON.stringify(results, null, 2) + "\n");
    console.log(`wrote ${RESULTS}`);
    writeDocs(results);
  }
}

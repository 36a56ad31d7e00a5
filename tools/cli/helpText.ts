import { DEFAULT_DEMO_OPTIONS, DEMO_LIMITS } from "../demo/demoOptions.js";
import { MATERIAL_SKIPPED_SHARE, SKIPPED_MEANING } from "../stress/skippedOperations.js";
import { DEFAULT_STRESS_OPTIONS } from "../stress/stressOptions.js";

/** The program's name as users type it. */
export const PROGRAM = "azure-storage-resilience";

/** `--help` without a command. */
export function mainHelp(): string {
  return `Usage: ${PROGRAM} <command> [flags]

Commands:
  demo     Azurite + a rebalancing simulator + a real TableClient: partitions go offline,
           time out and get throttled; the package rides it out; nothing is lost.
  stress   The Azure guide's partition stress test: ramp load on one PartitionKey and
           compare the throughput with the 2,000 entities/s per-partition target.

Run "${PROGRAM} <command> --help" for a command's flags.
`;
}

/** `demo --help`. */
export function demoHelp(): string {
  const d = DEFAULT_DEMO_OPTIONS;
  const l = DEMO_LIMITS;
  return `Usage: ${PROGRAM} demo [flags]

Starts Azurite (in memory, loopback) behind the rebalancing simulator and runs an open-loop
workload (inserts, upserts, point reads, queries, $batch) over several partitions, one of
them hot. The hot partition surges past its target (throttled), then goes offline for a few
seconds (503 ServerBusy) as if Azure moved it; another partition times out (500
OperationTimedOut); connections reset now and then. The same workload runs with the SDK's
default retry alongside. Ends with a summary verified by reading the store directly.

Flags:
  --duration <s>     seconds of workload, ${l.durationInSeconds.min}-${l.durationInSeconds.max} (default ${d.durationInSeconds})
  --rate <ops/s>     operations per second over all partitions, ${l.ratePerSecond.min}-${l.ratePerSecond.max} (default ${d.ratePerSecond})
  --partitions <n>   partitions p0 (hot) ... p<n-1>, ${l.partitions.min}-${l.partitions.max} (default ${d.partitions})
  --seed <n>         seed of the workload and of the fault draws (default ${d.seed})
  --no-baseline      skip the SDK-default-retry run
  --json             print the summary as JSON on stdout (progress goes to stderr);
                     through npm, add --silent so npm's banner stays off stdout:
                     npm start --silent -- --json
  --json-file <path> also write the summary as JSON to <path>
  -h, --help         this help

Ctrl-C stops early: Azurite is stopped, its data removed, and what ran is summarised.
`;
}

/** `stress --help`. */
export function stressHelp(): string {
  const s = DEFAULT_STRESS_OPTIONS;
  return `Usage: ${PROGRAM} stress [flags]

The partition stress test from Azure's table design guidance: create a test table, load it
with entities under one PartitionKey, ramp the request rate on that partition in steps
(a mix of upserts, point reads, queries and $batch writes, through this package's retry
policy), and report per step the achieved entities/s against the per-partition target,
when throttling (503, 500 timeouts) started, retries and latency. Writes a self-contained
HTML report with charts and prints its path.

${wrap(`${SKIPPED_MEANING} A step that skipped ${MATERIAL_SKIPPED_SHARE * 100} % or more is named in the output: its achieved rate measures the load generator, not the account.`)}

Target: embedded Azurite (default; the simulator throttles above --throttle-at), or a real
account with --connection-string or the AZURE_STORAGE_CONNECTION_STRING variable.

Flags:
  --connection-string <cs>  a storage account connection string (never printed)
  --table <name>            the test table (default: stress<timestamp>)
  --partition-key <pk>      the PartitionKey under test (default "${s.partitionKey}")
  --entities <n>            entities loaded before the ramp (default ${s.entities})
  --start-rate <n>          entities/s of the first step (default ${s.startRate})
  --max-rate <n>            entities/s of the last step (default ${s.maxRate})
  --steps <n>               number of steps (default ${s.steps})
  --step-duration <s>       seconds per step (default ${s.stepDurationInSeconds})
  --throttle-at <n>         embedded only: simulated per-partition target in entities/s,
                            0 for none (default ${s.throttleAt}, Azure's target)
  --report <file>           the HTML report's path (default ./stress-report-<timestamp>.html)
  --cleanup                 delete the test table afterwards (an account's: embedded
                            Azurite's is in memory, gone when the run ends)
  --json                    print the result as JSON on stdout
  -h, --help                this help
`;
}

/** `text` broken into lines of at most 90 characters, at spaces. */
function wrap(text: string): string {
  return text.replace(/(.{1,90})(?: +|$)/g, "$1\n").trimEnd();
}

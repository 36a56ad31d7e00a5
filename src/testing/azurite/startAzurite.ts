// Test tooling (the `/testing` entry): starts Azurite on a free loopback port and stops it. Over 250
// lines: finding the binary, waiting for readiness and cleaning up on every path.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STORAGE_SERVICES, type StorageService } from "../../address/partitionScope.js";
import { describeValue as describe } from "../../validation/describeValue.js";
import { numberOption } from "../../validation/optionSchema.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "./devstoreAccount.js";

/** Options of {@link startAzurite}. */
export interface StartAzuriteOptions {
  /** The services to start, each in its own Azurite process. Defaults to all three. */
  services?: StorageService[];
  /**
   * A folder for Azurite's data, kept after stop(). Defaults to none: data lives in
   * memory (`--inMemoryPersistence`) and the process runs in a temporary folder that
   * stop() deletes.
   */
  location?: string;
  /** How long to wait for each service to accept connections. Defaults to 30000. */
  startTimeoutInMs?: number;
  /**
   * The folder of an installed `azurite` package (the one holding its package.json), for
   * an Azurite installed elsewhere than beside this package (globally, another project).
   * Defaults to resolving `azurite` from this package's folder, as `require` would.
   */
  azuritePath?: string;
  /**
   * Runs each Azurite process in a process group of its own, so that a signal sent to the
   * caller's group (a terminal's Ctrl-C reaches every process of the foreground group) does not
   * stop Azurite before the caller has finished with it. For programs that handle SIGINT
   * themselves and then call stop(), as the demo does. stop() and the caller's exit still end the
   * whole group; but a SIGINT the caller does not handle ends it without its `exit` event, and
   * would leave Azurite running: handle it and call stop(). Ignored on Windows, which has no
   * process groups. Defaults to false: Azurite stays in the caller's group and a Ctrl-C ends it too.
   */
  detached?: boolean;
  /**
   * Starts Azurite with `--skipApiVersionCheck`: it then serves any `x-ms-version`, so an SDK
   * release newer than the installed Azurite still works (Azurite otherwise answers 400
   * `The API version ... is not supported by Azurite`). False checks the version as Azure does,
   * to test that a given Azurite serves what your SDK sends. Defaults to true.
   */
  skipApiVersionCheck?: boolean;
}

/** Defaults applied by {@link startAzurite}. */
export const DEFAULT_START_AZURITE_OPTIONS = {
  services: STORAGE_SERVICES,
  startTimeoutInMs: 30_000,
  detached: false,
  skipApiVersionCheck: true,
} as const;

/** Running Azurite services; call stop() when done. */
export interface RunningAzurite {
  /** The Tables account endpoint, `http://127.0.0.1:<port>/devstoreaccount1`. Throws if Tables was not started. */
  readonly tableUrl: string;
  /** The Blob account endpoint. Throws if Blob was not started. */
  readonly blobUrl: string;
  /** The Queue account endpoint. Throws if Queue was not started. */
  readonly queueUrl: string;
  /** Always `"devstoreaccount1"`. */
  readonly accountName: string;
  /** Azurite's public development key (see {@link DEVSTORE_ACCOUNT_KEY}); do not log it. */
  readonly accountKey: string;
  /** A connection string naming the endpoints of the started services; contains the key. */
  readonly connectionString: string;
  /** The services that were started. */
  readonly services: readonly StorageService[];
  /** Stops every Azurite process and waits for it to exit; deletes the temporary folder. Idempotent. */
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";
const PORT_ATTEMPTS = 3;
const KILL_GRACE_IN_MS = 5_000;
const OUTPUT_TAIL_CHARS = 4_000;
/** Each service's entry point announces success with one of these lines once it listens. */
const READY_LINE = /successfully (?:started|listens)/;
/** Each service's entry point inside the azurite package. */
const ENTRY_POINTS: Record<StorageService, string> = {
  table: "dist/src/table/main.js",
  blob: "dist/src/blob/main.js",
  queue: "dist/src/queue/main.js",
};
const ENDPOINT_NAMES: Record<StorageService, string> = { table: "TableEndpoint", blob: "BlobEndpoint", queue: "QueueEndpoint" };

/**
 * Starts Azurite (the `azurite` package, which must be installed) for the given
 * services, each as a child process bound to 127.0.0.1 on a free port, with
 * `--silent --loose --disableTelemetry` (and `--skipApiVersionCheck` unless
 * `skipApiVersionCheck` is false), and resolves once each
 * accepts connections. A service that fails to start rejects with its stderr tail, and
 * the services already started are stopped.
 *
 * One process per service, because each service's own entry point can start alone;
 * Azurite's combined entry point always starts all three.
 */
export async function startAzurite(options: StartAzuriteOptions = {}): Promise<RunningAzurite> {
  const services = validateServices(options.services);
  const startTimeoutInMs = numberOption({ min: 1, integer: true }, DEFAULT_START_AZURITE_OPTIONS.startTimeoutInMs)(
    options.startTimeoutInMs,
    "startTimeoutInMs",
  );
  if (options.location !== undefined && (typeof options.location !== "string" || options.location === "")) {
    throw new TypeError(`location must be a non-empty string; got ${describe(options.location)}.`);
  }
  if (options.azuritePath !== undefined && (typeof options.azuritePath !== "string" || options.azuritePath === "")) {
    throw new TypeError(`azuritePath must be a non-empty string; got ${describe(options.azuritePath)}.`);
  }
  if (options.detached !== undefined && typeof options.detached !== "boolean") {
    throw new TypeError(`detached must be a boolean; got ${describe(options.detached)}.`);
  }
  if (options.skipApiVersionCheck !== undefined && typeof options.skipApiVersionCheck !== "boolean") {
    throw new TypeError(`skipApiVersionCheck must be a boolean; got ${describe(options.skipApiVersionCheck)}.`);
  }
  const detached = (options.detached ?? DEFAULT_START_AZURITE_OPTIONS.detached) && process.platform !== "win32";
  const skipApiVersionCheck = options.skipApiVersionCheck ?? DEFAULT_START_AZURITE_OPTIONS.skipApiVersionCheck;
  // Found before anything starts, so a missing package is one clear line, not a stack per service.
  const entryPoints = resolveEntryPoints(services, options.azuritePath);
  // Even in memory, Azurite creates its workspace folder (the working directory): keep it out of the caller's.
  const workDirectory = await mkdtemp(join(tmpdir(), "azurite-"));
  liveWorkDirectories.add(workDirectory);
  ensureExitHook();
  const started: ServiceProcess[] = [];
  try {
    const results = await Promise.allSettled(
      services.map((service) =>
        startService(service, {
          entryPoint: entryPoints[service],
          location: options.location,
          startTimeoutInMs,
          workDirectory,
          detached,
          skipApiVersionCheck,
        }),
      ),
    );
    for (const result of results) if (result.status === "fulfilled") started.push(result.value);
    const failure = results.find((result) => result.status === "rejected");
    if (failure !== undefined) throw failure.reason;
  } catch (error) {
    await Promise.all(started.map(stopProcess));
    await rm(workDirectory, { recursive: true, force: true });
    liveWorkDirectories.delete(workDirectory);
    throw error;
  }
  return new AzuriteInstance(started, workDirectory);
}

interface ServiceProcess {
  service: StorageService;
  port: number;
  child: ChildProcess;
}

interface ServiceStartOptions {
  detached: boolean;
  entryPoint: string;
  location: string | undefined;
  skipApiVersionCheck: boolean;
  startTimeoutInMs: number;
  workDirectory: string;
}

class AzuriteInstance implements RunningAzurite {
  readonly accountName = DEVSTORE_ACCOUNT_NAME;
  readonly services: readonly StorageService[];
  readonly #processes: ServiceProcess[];
  readonly #workDirectory: string;
  #stopping: Promise<void> | undefined;

  constructor(processes: ServiceProcess[], workDirectory: string) {
    this.#processes = processes;
    this.#workDirectory = workDirectory;
    this.services = processes.map((p) => p.service);
  }

  get tableUrl(): string {
    return this.#url("table");
  }

  get blobUrl(): string {
    return this.#url("blob");
  }

  get queueUrl(): string {
    return this.#url("queue");
  }

  // A getter, so that printing the object does not print the key.
  get accountKey(): string {
    return DEVSTORE_ACCOUNT_KEY;
  }

  get connectionString(): string {
    const endpoints = this.#processes.map((p) => `${ENDPOINT_NAMES[p.service]}=${this.#url(p.service)};`);
    return `DefaultEndpointsProtocol=http;AccountName=${DEVSTORE_ACCOUNT_NAME};AccountKey=${DEVSTORE_ACCOUNT_KEY};${endpoints.join("")}`;
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await Promise.all(this.#processes.map(stopProcess));
      await rm(this.#workDirectory, { recursive: true, force: true });
      liveWorkDirectories.delete(this.#workDirectory);
    })();
    return this.#stopping;
  }

  #url(service: StorageService): string {
    const running = this.#processes.find((p) => p.service === service);
    if (running === undefined) {
      throw new Error(`Azurite's ${service} service was not started; started: ${this.services.join(", ")}.`);
    }
    return `http://${HOST}:${running.port}/${DEVSTORE_ACCOUNT_NAME}`;
  }
}

function validateServices(services: unknown): StorageService[] {
  if (services === undefined) return [...DEFAULT_START_AZURITE_OPTIONS.services];
  if (!Array.isArray(services)) throw new TypeError(`services must be an array; got ${describe(services)}.`);
  if (services.length === 0) throw new RangeError("services must name at least one service; got [].");
  for (const service of services) {
    if (!STORAGE_SERVICES.includes(service as StorageService)) {
      throw new TypeError(`services must contain only "table", "blob" or "queue"; got ${JSON.stringify(service)}.`);
    }
  }
  return [...new Set(services as StorageService[])];
}

/**
 * The entry point file of each service. Azurite is an optional peer of this package: a
 * missing one becomes a one-line Error saying what to install.
 */
function resolveEntryPoints(services: readonly StorageService[], azuritePath: string | undefined): Record<StorageService, string> {
  const entryPoints = {} as Record<StorageService, string>;
  for (const service of services) {
    const file = ENTRY_POINTS[service];
    if (azuritePath !== undefined) {
      entryPoints[service] = join(azuritePath, file);
      if (!existsSync(entryPoints[service])) {
        throw new Error(`startAzurite: azuritePath ${JSON.stringify(azuritePath)} holds no azurite package (no ${file} in it).`);
      }
      continue;
    }
    try {
      entryPoints[service] = createRequire(import.meta.url).resolve(`azurite/${file}`);
    } catch (error) {
      if ((error as { code?: unknown }).code !== "MODULE_NOT_FOUND") throw error;
      throw new Error("startAzurite needs the azurite package: npm install --save-dev azurite", { cause: error });
    }
  }
  return entryPoints;
}

/** Picks a free port and starts the service there; retries when another process takes the port first. */
async function startService(service: StorageService, options: ServiceStartOptions): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    const port = await findFreePort();
    try {
      return await spawnService(service, port, options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function spawnService(service: StorageService, port: number, options: ServiceStartOptions): Promise<ServiceProcess> {
  const args = [
    options.entryPoint,
    `--${service}Host`,
    HOST,
    `--${service}Port`,
    String(port),
    "--silent",
    "--loose",
    ...(options.skipApiVersionCheck ? ["--skipApiVersionCheck"] : []),
    "--disableTelemetry",
    ...(options.location === undefined ? ["--inMemoryPersistence"] : ["--location", options.location]),
  ];
  const env = { ...process.env };
  // AZURITE_ACCOUNTS would replace devstoreaccount1 and its well-known key.
  delete env.AZURITE_ACCOUNTS;
  const child = spawn(process.execPath, args, { cwd: options.workDirectory, env, stdio: ["ignore", "pipe", "pipe"], detached: options.detached });
  if (options.detached) groupLeaders.add(child);
  liveProcesses.add(child);
  const output = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output.stdout = tail(output.stdout + chunk)));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output.stderr = tail(output.stderr + chunk)));
  child.once("exit", () => liveProcesses.delete(child));

  try {
    await waitForReady(child, output, options.startTimeoutInMs, service);
    await waitForConnection(port, options.startTimeoutInMs);
  } catch (error) {
    await stopProcess({ service, port, child });
    if (/EADDRINUSE/.test(output.stderr)) throw new PortTakenError(`port ${port} was taken`);
    throw error;
  }
  // Unref'd so a forgotten stop() cannot keep the caller's process alive; the exit hook still kills it.
  child.unref();
  unrefStream(child.stdout);
  unrefStream(child.stderr);
  return { service, port, child };
}

function waitForReady(child: ChildProcess, output: { stdout: string; stderr: string }, timeoutInMs: number, service: StorageService): Promise<void> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("close", onExit);
      child.off("error", onError);
    };
    const onData = () => {
      if (!READY_LINE.test(output.stdout)) return;
      cleanup();
      resolve();
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      cleanup();
      const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
      reject(new Error(`Azurite ${service} service exited during start (${how}).${describeOutput(output.stderr)}`));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new Error(`Azurite ${service} service could not be spawned: ${error.message}`, { cause: error }));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Azurite ${service} service did not start within ${timeoutInMs} ms.${describeOutput(output.stderr)}`));
    }, timeoutInMs);
    timer.unref();
    child.stdout?.on("data", onData);
    // "close", not "exit": it comes after stderr has been read to the end.
    child.once("close", onExit);
    child.once("error", onError);
    onData();
  });
}

/** The ready line comes after listen(); one connection confirms the port is Azurite's and open. */
async function waitForConnection(port: number, timeoutInMs: number): Promise<void> {
  const deadline = Date.now() + timeoutInMs;
  for (;;) {
    try {
      await connectOnce(port);
      return;
    } catch (error) {
      if (Date.now() >= deadline) throw new Error(`Azurite did not accept connections on port ${port}.`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 50).unref());
    }
  }
}

function connectOnce(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: HOST, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve();
    });
    socket.once("error", reject);
  });
}

function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("could not find a free port"))));
    });
  });
}

/** SIGTERM, then SIGKILL if the process has not exited after a grace period; resolves on exit. */
async function stopProcess({ child }: ServiceProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Re-referenced so that awaiting the exit keeps the caller's event loop alive.
  child.ref();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  signal(child, "SIGTERM");
  const killer = setTimeout(() => signal(child, "SIGKILL"), KILL_GRACE_IN_MS);
  killer.unref();
  await exited;
  clearTimeout(killer);
}

/** Sends `name` to the child's whole process group when it leads one (`detached`), else to the child. */
function signal(child: ChildProcess, name: NodeJS.Signals): void {
  if (groupLeaders.has(child) && child.pid !== undefined) {
    try {
      process.kill(-child.pid, name);
      return;
    } catch {
      // ESRCH: the group has no process left; the child's own kill below is then a no-op too.
    }
  }
  child.kill(name);
}

const liveProcesses = new Set<ChildProcess>();
/** Work directories of instances not stopped yet: removed when the parent exits without stop(). */
const liveWorkDirectories = new Set<string>();
/** Children started `detached`, each the leader of its own process group. */
const groupLeaders = new WeakSet<ChildProcess>();
let exitHookInstalled = false;

/**
 * Kills children left running when the parent exits (a test run that crashed before stop()), and removes
 * their work directories, which were otherwise left in the temp folder, one per such exit.
 */
function ensureExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of liveProcesses) signal(child, "SIGKILL");
    for (const directory of liveWorkDirectories) rmSync(directory, { recursive: true, force: true });
  });
}

function unrefStream(stream: unknown): void {
  (stream as { unref?: () => void } | null)?.unref?.();
}

function tail(text: string): string {
  return text.length > OUTPUT_TAIL_CHARS ? text.slice(-OUTPUT_TAIL_CHARS) : text;
}

function describeOutput(stderr: string): string {
  const trimmed = stderr.trim();
  return trimmed === "" ? "" : ` stderr: ${trimmed}`;
}

// Compares the public API of each entry point (the built dist/esm/index.d.ts and
// dist/esm/testing/index.d.ts) with its committed report in review/. `--local` rewrites the
// reports instead. Run through `npm run api:check` / `npm run api:update`, which build first.
import { spawnSync } from "node:child_process";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const CONFIGS = ["api-extractor.json", "api-extractor.testing.json"];
const local = process.argv.includes("--local");
let failed = false;

for (const file of CONFIGS) {
  const config = ExtractorConfig.loadFileAndPrepare(file);
  const result = Extractor.invoke(config, { localBuild: local, showVerboseMessages: false });
  if (result.apiReportChanged && !local) {
    const committed = config.reportFilePath;
    const fresh = config.reportTempFilePath;
    console.error(`\nThe public API changed, and ${committed} was not updated. The difference:\n`);
    spawnSync("git", ["--no-pager", "diff", "--no-index", "--", committed, fresh], { stdio: "inherit" });
    console.error("\nIf the change is intended, run `npm run api:update` and commit the report with it.");
    failed = true;
    continue;
  }
  if (!result.succeeded) {
    console.error(`API Extractor found ${result.errorCount} error(s) and ${result.warningCount} warning(s) in ${file}.`);
    failed = true;
    continue;
  }
  console.log(local ? `API report updated: ${config.reportFilePath}` : `The public API matches ${config.reportFilePath}.`);
}
if (failed) process.exit(1);

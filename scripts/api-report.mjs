// Compares the public API (the built dist/esm/index.d.ts) with the committed report
// review/azure-storage-resilience.api.md. `--local` rewrites the report instead.
// Run through `npm run api:check` / `npm run api:update`, which build first.
import { spawnSync } from "node:child_process";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const local = process.argv.includes("--local");
const config = ExtractorConfig.loadFileAndPrepare("api-extractor.json");
const result = Extractor.invoke(config, { localBuild: local, showVerboseMessages: false });

if (result.apiReportChanged && !local) {
  const committed = config.reportFilePath;
  const fresh = config.reportTempFilePath;
  console.error(`\nThe public API changed, and ${committed} was not updated. The difference:\n`);
  spawnSync("git", ["--no-pager", "diff", "--no-index", "--", committed, fresh], { stdio: "inherit" });
  console.error("\nIf the change is intended, run `npm run api:update` and commit the report with it.");
  process.exit(1);
}
if (!result.succeeded) {
  console.error(`API Extractor found ${result.errorCount} error(s) and ${result.warningCount} warning(s).`);
  process.exit(1);
}
console.log(local ? `API report updated: ${config.reportFilePath}` : "The public API matches the committed report.");

// Lets Node run the benchmarks and our sources as they are: they import "./x.js", the file is x.ts.
// (Node's type stripping does not rewrite import suffixes; see docs/benchmarks.md for the command.)
import { registerHooks } from "node:module";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

registerHooks({
  resolve(specifier, context, nextResolve) {
    const relative = specifier.startsWith("./") || specifier.startsWith("../");
    if (relative && specifier.endsWith(".js") && context.parentURL?.startsWith("file:")) {
      const asTs = new URL(specifier.slice(0, -3) + ".ts", context.parentURL);
      if (!existsSync(new URL(specifier, context.parentURL)) && existsSync(fileURLToPath(asTs))) {
        return nextResolve(asTs.href, context);
      }
    }
    return nextResolve(specifier, context);
  },
});

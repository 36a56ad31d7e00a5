// Lets `npm start` run the CLI from its TypeScript sources with Node's built-in type
// handling, no build step: the sources import "./x.js", the file on disk is x.ts.
import { existsSync } from "node:fs";
import { registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

registerHooks({
  resolve(specifier, context, nextResolve) {
    const relative = specifier.startsWith("./") || specifier.startsWith("../");
    if (relative && specifier.endsWith(".js") && context.parentURL?.startsWith("file:")) {
      const asTs = new URL(specifier.slice(0, -3) + ".ts", context.parentURL);
      if (!existsSync(new URL(specifier, context.parentURL)) && existsSync(fileURLToPath(asTs))) return nextResolve(asTs.href, context);
    }
    return nextResolve(specifier, context);
  },
});

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Folders of src/ import one way (docs/architecture.md): a cycle between folders means two
// ideas that cannot be read apart. This reads every relative import and looks for one.

const SRC = join(dirname(fileURLToPath(import.meta.url)), "../../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The top folder under src/ a file belongs to ("" for src/index.ts). */
function folderOf(path: string): string {
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 ? (parts[0] as string) : "";
}

/** folder → the folders its files import from, with one example import each. */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    for (const match of readFileSync(file, "utf8").matchAll(/from\s+"(\.[^"]+)"/g)) {
      const to = folderOf(normalize(join(dirname(file), match[1] as string)));
      if (to === from || to === "") continue;
      if (!graph.has(from)) graph.set(from, new Map());
      graph.get(from)?.set(to, `${relative(SRC, file)} imports ${match[1]}`);
    }
  }
  return graph;
}

/** A cycle of folders, as the imports that make it, or undefined (depth-first search). */
function findCycle(graph: Map<string, Map<string, string>>): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (folder: string): string[] | undefined => {
    const at = path.indexOf(folder);
    if (at !== -1) {
      const loop = [...path.slice(at), folder];
      return loop.slice(1).map((to, i) => graph.get(loop[i] as string)?.get(to) as string);
    }
    if (done.has(folder)) return undefined;
    path.push(folder);
    for (const next of graph.get(folder)?.keys() ?? []) {
      const cycle = visit(next);
      if (cycle !== undefined) return cycle;
    }
    path.pop();
    done.add(folder);
    return undefined;
  };
  for (const folder of graph.keys()) {
    const cycle = visit(folder);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

describe("src/ folders", () => {
  it("import one way: no cycle between folders", () => {
    const graph = folderGraph();
    expect(graph.size).toBeGreaterThan(10); // the reader found the imports at all
    expect(findCycle(graph)).toBeUndefined();
  });

  it("the cycle finder finds a cycle when there is one", () => {
    const graph = new Map([
      ["a", new Map([["b", "a/x.ts imports ../b/y.js"]])],
      ["b", new Map([["c", "b/y.ts imports ../c/z.js"]])],
      ["c", new Map([["a", "c/z.ts imports ../a/x.js"]])],
    ]);
    expect(findCycle(graph)).toEqual(["a/x.ts imports ../b/y.js", "b/y.ts imports ../c/z.js", "c/z.ts imports ../a/x.js"]);
  });
});

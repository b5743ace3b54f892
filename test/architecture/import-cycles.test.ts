// No import circles among the source files: a file's imports, followed transitively, never lead
// back to it (type-only imports included: a circle of types is still a circle to a reader).
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, sourceFiles } from "./source-files.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..", "..");
const SOURCE_FOLDERS = ["common", "coordinator", "agent", "scorer", "sim", "card", "run", "view", "cli", "bench"];

function relativeImports(file: string): string[] {
  return importsOf(file)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(dirname(file), spec).replace(/\.js$/, ".ts"));
}

/** Every circle found by depth-first search, each as the list of files from a file back to it. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

describe("import graph", () => {
  const graph = new Map<string, string[]>();
  for (const folder of SOURCE_FOLDERS) for (const file of sourceFiles(join(ROOT, folder))) graph.set(file, relativeImports(file));

  it("reads the source files", () => {
    expect(graph.size).toBeGreaterThan(50);
  });

  it("has no circles", () => {
    const cycles = findCycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(" -> "));
    expect(cycles).toEqual([]);
  });
});

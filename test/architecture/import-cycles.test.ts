// No import circles among the source files: a file's imports, followed transitively, never lead
// back to it (type-only imports included: a circle of types is still a circle to a reader).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..", "..");
const SOURCE_FOLDERS = ["common", "coordinator", "agent", "scorer", "sim", "cli", "bench"];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.ts$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

function relativeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const re = /(?:import|export)\s[^'"]*?from\s*["'](\.[^"']+)["']|import\s*\(\s*["'](\.[^"']+)["']\s*\)|import\s+["'](\.[^"']+)["']/g;
  return [...text.matchAll(re)].map((m) => resolve(dirname(file), (m[1] ?? m[2] ?? m[3])!).replace(/\.js$/, ".ts"));
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

// The source files of a folder and the module specifiers each imports, read from the text: what
// the architecture tests check.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.ts$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

export function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const re = /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;
  return [...text.matchAll(re)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

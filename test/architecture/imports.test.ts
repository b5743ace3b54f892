// Enforces DESIGN.md's "may import" column: every relative import of a source folder must land
// in a folder it is allowed to import, and gRPC/NATS stay out of the scorer.
import { join, relative, resolve, dirname, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { importsOf, sourceFiles } from "./source-files.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..", "..");

const MAY_IMPORT: Record<string, readonly string[]> = {
  proto: [],
  common: ["proto"],
  coordinator: ["common", "proto", "scorer"],
  agent: ["common", "proto"],
  scorer: ["common"],
  sim: ["common"],
  card: ["common", "scorer"],
  cli: ["proto", "common", "coordinator", "agent", "scorer", "sim", "card", "bench"],
  bench: ["proto", "common", "coordinator", "agent", "scorer", "sim", "card", "cli"],
};

/** Packages a folder must not use directly. */
const FORBIDDEN_PACKAGES: Record<string, readonly RegExp[]> = {
  scorer: [/^@grpc\//, /^nats$/, /^@nats-io\//, /^node:(http|https|net)$/],
  common: [/^@grpc\/grpc-js$/],
  sim: [/^@grpc\//],
};

const cases: Array<[string, string, string]> = [];
for (const folder of Object.keys(MAY_IMPORT)) {
  let files: string[] = [];
  try {
    files = sourceFiles(join(ROOT, folder));
  } catch {
    continue;
  }
  for (const file of files) for (const spec of importsOf(file)) cases.push([folder, relative(ROOT, file), spec]);
}

describe("DESIGN.md import column", () => {
  it("finds source files to check", () => {
    expect(cases.length).toBeGreaterThan(10);
  });

  it.each(cases)("%s: %s imports %s", (folder, file, spec) => {
    if (spec.startsWith(".")) {
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec)).split(sep)[0]!;
      if (target === folder) return;
      expect(MAY_IMPORT[folder], `${file} imports ${spec} (${target}/)`).toContain(target);
    } else {
      for (const re of FORBIDDEN_PACKAGES[folder] ?? []) {
        expect(re.test(spec), `${file} must not import ${spec}`).toBe(false);
      }
    }
  });
});

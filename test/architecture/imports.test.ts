// Enforces docs/design.md's "may import" column: every relative import of a source folder must land
// in a folder it is allowed to import, only through that folder's front door (its index.ts; in
// common/, a concept folder's index.ts or a one-file concept), and gRPC/NATS stay out of the scorer.
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
  view: ["common", "scorer", "card"],
  run: ["common", "proto", "coordinator", "scorer", "card", "agent", "sim"],
  cli: ["proto", "common", "coordinator", "agent", "scorer", "sim", "card", "run", "view", "bench"],
  bench: ["proto", "common", "coordinator", "agent", "scorer", "sim", "card", "run", "view", "cli"],
};

/** Packages a folder must not use directly. */
const FORBIDDEN_PACKAGES: Record<string, readonly RegExp[]> = {
  scorer: [/^@grpc\//, /^nats$/, /^@nats-io\//, /^node:(http|https|net)$/],
  common: [/^@grpc\/grpc-js$/],
  sim: [/^@grpc\//],
};

const ROLES = ["agent", "card", "coordinator", "run", "scorer", "sim", "view"];

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

/** The front door an import of `target` (a path from the root) must go through, or undefined (none: proto, cli, bench, a one-file concept of common). */
function frontDoorOf(target: string): string | undefined {
  const parts = target.split(sep);
  if (ROLES.includes(parts[0]!)) return join(parts[0]!, "index.ts");
  if (parts[0] === "common" && parts.length > 2) return join("common", parts[1]!, "index.ts");
  return undefined;
}

/** The unit whose files import each other freely: a role, or one concept of common. */
function unitOf(file: string): string {
  const door = frontDoorOf(file);
  return door ? dirname(door) : file;
}

describe("docs/design.md import column", () => {
  it("finds source files to check", () => {
    expect(cases.length).toBeGreaterThan(10);
  });

  it.each(cases)("%s: %s imports %s", (folder, file, spec) => {
    if (spec.startsWith(".")) {
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec)).split(sep)[0]!;
      const targetFile = relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, ".ts");
      const door = frontDoorOf(targetFile);
      if (door && unitOf(file) !== dirname(door)) {
        expect(targetFile, `${file} imports ${spec}: across folders, only ${door} (the front door)`).toBe(door);
      }
      if (target === folder) return;
      expect(MAY_IMPORT[folder], `${file} imports ${spec} (${target}/)`).toContain(target);
    } else {
      for (const re of FORBIDDEN_PACKAGES[folder] ?? []) {
        expect(re.test(spec), `${file} must not import ${spec}`).toBe(false);
      }
    }
  });
});

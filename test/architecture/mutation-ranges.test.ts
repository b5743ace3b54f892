// The mutation modules that cover part of a file do it by line numbers (Stryker's `file:from-to`):
// this fails when an edit moves the code they mean, instead of the mutation score silently
// measuring other lines.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs module without types
import { MODULES, RANGE_ENDS } from "../../mutation/modules.mjs";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..", "..");
const ranges = (MODULES as Array<{ files: string[] }>).flatMap((m) => m.files.filter((f) => /:\d+-\d+$/.test(f)));
const ends = RANGE_ENDS as Record<string, [string, string]>;

describe("mutation modules' line ranges", () => {
  it("name their first and last lines, and only ranges in use are named", () => {
    expect(ranges.length).toBeGreaterThan(0);
    expect(Object.keys(ends).sort()).toEqual([...ranges].sort());
  });

  it.each(ranges)("%s still starts and ends where it did", (range) => {
    const [, file, from, to] = /^(.*):(\d+)-(\d+)$/.exec(range)!;
    const lines = readFileSync(resolve(ROOT, file!), "utf8").split("\n");
    const [first, last] = ends[range]!;
    expect(lines[Number(from) - 1]).toBe(first);
    expect(lines[Number(to) - 1]).toBe(last);
  });
});

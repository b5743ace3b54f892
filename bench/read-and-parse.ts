// The floor benchmarks compare startup with: read every selected track file, decompress, hash and
// parse every line and validate it against the record schema, nothing else. Run in a child process
// of its own (measureReadAndParse) so its CPU and RSS are its own and it does not share the cores
// with what it is compared to.
import { spawnSync } from "node:child_process";
import { openSuite, readTrackRecords, selectFiles } from "../common/suite/index.js";

export interface ReadAndParseFigures {
  wall_s: number;
  cpu_s: number;
  max_rss_mib: number;
  records: number;
}

/** In this process: reads and parses the suite (or the given tracks) and returns the figures. */
export async function readAndParse(suiteDir: string, tracks?: readonly string[]): Promise<ReadAndParseFigures> {
  const t0 = performance.now();
  const before = process.resourceUsage();
  let records = 0;
  const suite = openSuite(suiteDir);
  for (const file of selectFiles(suite, tracks ? { tracks } : {})) {
    for await (const _ of readTrackRecords(file, { onHash: () => undefined })) records++;
  }
  const u = process.resourceUsage();
  const cpu = (u.userCPUTime + u.systemCPUTime - before.userCPUTime - before.systemCPUTime) / 1e6;
  return { wall_s: (performance.now() - t0) / 1000, cpu_s: cpu, max_rss_mib: u.maxRSS / 1024, records };
}

/** The argument that makes a benchmark script run readAndParse as its child. */
export const READ_AND_PARSE_CHILD = "--read-and-parse-child";

/** When this process is such a child: runs it, prints the figures and returns true. */
export async function runReadAndParseChild(): Promise<boolean> {
  const i = process.argv.indexOf(READ_AND_PARSE_CHILD);
  if (i < 0) return false;
  const suite = process.argv[i + 1]!;
  const tracks = process.argv[i + 2] ? process.argv[i + 2]!.split(",") : undefined;
  process.stdout.write(JSON.stringify(await readAndParse(suite, tracks)) + "\n");
  return true;
}

/** Runs `script` (a benchmark that calls runReadAndParseChild first) as a child and returns its figures. */
export function measureReadAndParse(script: string, suiteDir: string, tracks?: string): ReadAndParseFigures {
  const child = spawnSync(process.execPath, [script, READ_AND_PARSE_CHILD, suiteDir, ...(tracks ? [tracks] : [])], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (child.status !== 0) throw new Error(`read-and-parse child failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").pop()!) as ReadAndParseFigures;
}

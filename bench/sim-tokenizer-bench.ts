// Benchmark of the simulated engine's tokenizers: how long a real tokenizer takes to load, and
// the simulator's throughput with it against the built-in one, for the methods that tokenize the
// most (label-read over completions and chat: every prompt is encoded, every id read decoded) and
// /v1/systemone (its reads are counted with the tokenizer).
//
//   node dist/bench/sim-tokenizer-bench.js [--suite DIR] [--per-track 3] [--concurrency 16]
//                                          [--tokenizers builtin,qwen3,llama3.1,gemma3] [--out bench/out/sim-tokenizer.json]
//
// Without --suite a small synthetic suite is made in a temp dir. Records are the first N of every
// track; agents and sim share this process, as in `run --sim`, so CPU seconds per record are the
// run's whole CPU cost and "cpu_vs_builtin" is what a real tokenizer adds to it. The sim's token
// rate is 0 (no simulated GPU time): the figures are this machine's CPU, nothing else.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { openSuite, readTrackRecords } from "../common/suite/index.js";
import { isTokenizerName, loadHfTokenizer, makeSuite, startSimEngine, type EngineTokenizer, type TokenizerName } from "../sim/index.js";
import { LabelReadMethod, SystemOneMethod, type EngineMethod, type RecordPayload } from "../agent/index.js";
import { arg, optionalArg } from "./bench-args.js";

const perTrack = Number(arg("per-track", "3"));
const concurrency = Number(arg("concurrency", "16"));
const out = arg("out", "bench/out/sim-tokenizer.json");
const names = arg("tokenizers", "builtin,qwen3,llama3.1,gemma3").split(",");
for (const n of names) if (!isTokenizerName(n)) throw new Error(`unknown tokenizer ${n}`);

let suiteDir = optionalArg("suite");
let made: string | undefined;
if (!suiteDir) {
  made = suiteDir = mkdtempSync(join(tmpdir(), "udm-sim-tokenizer-bench-"));
  await makeSuite({ out: suiteDir, scale: "small", seed: 7 });
}

const records: RecordPayload[] = [];
let questions = 0;
for (const file of openSuite(suiteDir).files) {
  let taken = 0;
  for await (const r of readTrackRecords(file)) {
    if (taken++ >= perTrack) break;
    questions += Object.keys(r.questions).length;
    records.push({ recordKey: r._evaluation.run_id, id: r.id, state: r.state, questions: r.questions, payloadSha256: r._evaluation.payload_sha256 ?? "" });
  }
}

const methods: Record<string, (baseUrl: string) => EngineMethod> = {
  systemone: (baseUrl) => new SystemOneMethod({ baseUrl }),
  "label-read (completions)": (baseUrl) => new LabelReadMethod({ baseUrl }),
  "label-read (chat)": (baseUrl) => new LabelReadMethod({ baseUrl, api: "chat" }),
};

interface Figures {
  records_per_s: number;
  cpu_s_per_record: number;
  prompt_tokens_per_record: number;
  errors: number;
}

async function measure(tokenizer: EngineTokenizer | "builtin", make: (baseUrl: string) => EngineMethod): Promise<Figures> {
  const engine = await startSimEngine({ model: "bench", seed: 1, tokensPerS: 0, maxModelLen: 32768, tokenizer });
  try {
    const method = make(engine.url);
    const signal = new AbortController().signal;
    let errors = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < records.length) {
          const out = await method.answer(records[next++]!, signal);
          errors += Object.keys(out.errors).length;
        }
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      records_per_s: +(records.length / wall).toFixed(1),
      cpu_s_per_record: +((cpu.user + cpu.system) / 1e6 / records.length).toFixed(5),
      prompt_tokens_per_record: Math.round(engine.stats().promptTokens / records.length),
      errors,
    };
  } finally {
    await engine.close();
  }
}

const results: Array<Record<string, unknown>> = [];
const builtinCpu = new Map<string, number>();
for (const name of names as TokenizerName[]) {
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const tokenizer = name === "builtin" ? "builtin" : await loadHfTokenizer(name);
  const loadMs = performance.now() - t0;
  const entry: Record<string, unknown> = { tokenizer: name, load_ms: Math.round(loadMs), rss_added_mb: Math.round((process.memoryUsage().rss - rss0) / 1e6) };
  for (const [method, make] of Object.entries(methods)) {
    const f = await measure(tokenizer, make);
    if (name === "builtin") builtinCpu.set(method, f.cpu_s_per_record);
    const base = builtinCpu.get(method);
    entry[method] = { ...f, ...(base ? { cpu_vs_builtin: +(f.cpu_s_per_record / base).toFixed(2) } : {}) };
    process.stderr.write(`${name} ${method}: ${JSON.stringify(entry[method])}\n`);
  }
  results.push(entry);
}

const figures = {
  benchmark: "sim-tokenizer",
  node: process.version,
  cpus: cpus().length,
  cpu_model: cpus()[0]?.model ?? "",
  measured_at: new Date().toISOString(),
  sample: { per_track: perTrack, records: records.length, questions },
  concurrency,
  results,
};
if (made) rmSync(made, { recursive: true, force: true });
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(figures, null, 2) + "\n");
process.stdout.write(JSON.stringify(figures, null, 2) + "\n");

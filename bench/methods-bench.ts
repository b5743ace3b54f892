// Benchmark of the engine methods (systemone, decisions, label-read) against the simulated engine
// on the full-scale synthetic suite: HTTP requests per record, prompt tokens per record, and the
// simulated prefix-cache hit rate next to the best achievable for the same reads.
//
//   node dist/bench/methods-bench.js --suite DIR [--per-track N] [--concurrency 16] [--kv-cache-tokens N]
//                                    [--methods systemone,label-read] [--bos] [--out bench/out/methods.json]
//                                    [--profiles legacy,structured-seed,current] [--tokenizers builtin,qwen3,llama3.1,gemma3]
//
// DIR is a full-scale suite (`udm-orch suite make --scale full`). Records are a stratified sample:
// the first N records of every track (all 44), so every question shape is in it; figures are per
// record over the sample. "realistic": records run 16 at a time against the default KV cache
// (1M tokens, LRU). "best": the same records one after another against an unbounded cache, where
// every shared state is computed once (whole 16-token blocks, as vLLM caches) - the best any
// client can get for these prompts. The sim's token rate is 0 here (no GPU time): the figures are
// counts, not speed; wall time is the agent's and the sim's own overhead on this machine. --bos
// simulates a BOS-adding tokenizer (Llama, Gemma), where label-read's deeper reads must carry BOS
// to hit the cache. --profiles runs every method (systemone, decisions, label-read over completions
// and over chat, each without and with seeds 0,1,2) against each of the sim's vLLM profiles
// (sim/engine/vllm-profile.ts); without it, the default profile and the methods as before. Each
// method first does what an agent does at startup (info(): the endpoint probe, the seed probe),
// counted apart as probe_requests; the per-record figures are the records' own. --tokenizers runs
// the whole set once per tokenizer of the sim (the real ones load once, before the runs): prompt
// tokens and cache blocks are then the model's own, and wall_s shows what the tokenizer costs.
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname } from "node:path";
import { openSuite, readTrackRecords } from "../common/suite/index.js";
import { startSimEngine, VLLM_PROFILES, isVllmProfile, loadHfTokenizer, isTokenizerName, TOKENIZER_NAMES, type SimEngineOptions, type VllmProfile, type TokenizerName } from "../sim/index.js";
import { SystemOneMethod, DecisionsMethod, LabelReadMethod, LABEL_READ_TEMPLATE_SHA256, LABEL_READ_TEMPLATE_VERSION, type EngineMethod, type RecordPayload } from "../agent/index.js";
import { arg, optionalArg } from "./bench-args.js";

interface Sample {
  records: RecordPayload[];
  questions: number;
  suiteRecords: number;
  tracks: number;
}

async function loadSample(dir: string, perTrack: number): Promise<Sample> {
  const suite = openSuite(dir);
  const records: RecordPayload[] = [];
  let suiteRecords = 0;
  let questions = 0;
  for (const file of suite.files) {
    let taken = 0;
    for await (const r of readTrackRecords(file)) {
      suiteRecords++;
      if (taken >= perTrack) continue;
      taken++;
      questions += Object.keys(r.questions).length;
      records.push({ recordKey: r._evaluation.run_id, id: r.id, state: r.state, questions: r.questions, payloadSha256: r._evaluation.payload_sha256 ?? "" });
    }
  }
  return { records, questions, suiteRecords, tracks: suite.files.length };
}

type Maker = (baseUrl: string) => EngineMethod;

interface RunFigures {
  wall_s: number;
  /** Requests of the startup probes (info()): once per agent and engine, not per record. */
  probe_requests: number;
  inference_requests_per_record: number;
  tokenize_requests_per_record: number;
  requests_by_endpoint_per_record: Record<string, number>;
  prompt_tokens_per_record: number;
  cached_tokens_per_record: number;
  prefix_cache_hit_rate: number;
  answered_share: number;
  skipped: number;
  errors: number;
  approximate_records: number;
  answered_by: Record<string, number>;
}

async function run(make: Maker, sample: Sample, engineOptions: SimEngineOptions, concurrency: number): Promise<RunFigures> {
  const engine = await startSimEngine({ model: "bench", seed: 1, tokensPerS: 0, maxModelLen: 32768, ...engineOptions });
  const method = make(engine.url);
  await method.info();
  const probe = engine.stats();
  const probeRequests = probe.requests + probe.tokenizeRequests + probe.detokenizeRequests;
  let next = 0;
  let answered = 0;
  let skipped = 0;
  let errors = 0;
  let approximate = 0;
  const answeredBy: Record<string, number> = {};
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const signal = new AbortController().signal;
      while (next < sample.records.length) {
        const out = await method.answer(sample.records[next++]!, signal);
        answered += Object.keys(out.probs).length;
        skipped += out.skipped.length;
        errors += Object.keys(out.errors).length;
        if (out.approximate) approximate++;
        for (const by of Object.values(out.answeredBy)) answeredBy[by] = (answeredBy[by] ?? 0) + 1;
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const after = engine.stats();
  await engine.close();
  // The records' own: what the startup probes sent is taken off.
  const s = {
    requests: after.requests - probe.requests,
    tokenizeRequests: after.tokenizeRequests - probe.tokenizeRequests,
    byEndpoint: Object.fromEntries(Object.entries(after.byEndpoint).map(([k, v]) => [k, v - (probe.byEndpoint[k] ?? 0)]).filter(([, v]) => (v as number) > 0)) as Record<string, number>,
    promptTokens: after.promptTokens - probe.promptTokens,
    cachedTokens: after.cachedTokens - probe.cachedTokens,
  };
  const n = sample.records.length;
  const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
  return {
    wall_s: round(wall),
    probe_requests: probeRequests,
    inference_requests_per_record: round(s.requests / n),
    tokenize_requests_per_record: round(s.tokenizeRequests / n),
    requests_by_endpoint_per_record: Object.fromEntries(Object.entries(s.byEndpoint).map(([k, v]) => [k, round(v / n)])),
    prompt_tokens_per_record: round(s.promptTokens / n, 1),
    cached_tokens_per_record: round(s.cachedTokens / n, 1),
    prefix_cache_hit_rate: round(s.cachedTokens / Math.max(1, s.promptTokens), 4),
    answered_share: round(answered / sample.questions, 4),
    skipped,
    errors,
    approximate_records: approximate,
    answered_by: answeredBy,
  };
}

const suiteDir = optionalArg("suite");
if (!suiteDir) {
  process.stderr.write("usage: methods-bench --suite DIR (a full-scale suite) [--per-track N] [--concurrency N] [--out FILE]\n");
  process.exit(2);
}
const perTrack = Number(arg("per-track", "40"));
const concurrency = Number(arg("concurrency", "16"));
const out = arg("out", "bench/out/methods.json");
const only = optionalArg("methods")?.split(",");
/** KV cache of the "realistic" runs, in tokens (the sim's default 1M when absent). */
const kvCacheTokens = optionalArg("kv-cache-tokens") ? Number(optionalArg("kv-cache-tokens")) : undefined;
/** A BOS-adding tokenizer in the sim (Llama, Gemma). */
const bos = process.argv.includes("--bos");
/** vLLM profiles of the sim to run every method against; none: the default profile, the methods as before. */
const profileArg = optionalArg("profiles");
const profiles: VllmProfile[] | undefined = profileArg?.split(",").map((p) => {
  if (!isVllmProfile(p)) {
    process.stderr.write(`--profiles: ${JSON.stringify(p)} is not one of ${VLLM_PROFILES.join(", ")}\n`);
    process.exit(2);
  }
  return p;
});
const tokenizers: TokenizerName[] = (optionalArg("tokenizers") ?? "builtin").split(",").map((t) => {
  if (!isTokenizerName(t)) {
    process.stderr.write(`--tokenizers: ${JSON.stringify(t)} is not one of ${TOKENIZER_NAMES.join(", ")}\n`);
    process.exit(2);
  }
  return t;
});
const sample = await loadSample(suiteDir, perTrack);
process.stderr.write(`sample: ${sample.records.length} records (${sample.questions} questions) of ${sample.suiteRecords}, ${sample.tracks} tracks\n`);

const SEEDS = [0, 1, 2];
const profileMethods: Record<string, Maker> = {
  systemone: (baseUrl) => new SystemOneMethod({ baseUrl }),
  "systemone seeds 0,1,2": (baseUrl) => new SystemOneMethod({ baseUrl, seeds: SEEDS }),
  decisions: (baseUrl) => new DecisionsMethod({ baseUrl }),
  "decisions seeds 0,1,2": (baseUrl) => new DecisionsMethod({ baseUrl, seeds: SEEDS }),
  "label-read": (baseUrl) => new LabelReadMethod({ baseUrl }),
  "label-read seeds 0,1,2": (baseUrl) => new LabelReadMethod({ baseUrl, seeds: SEEDS }),
  "label-read chat": (baseUrl) => new LabelReadMethod({ baseUrl, api: "chat" }),
  "label-read chat seeds 0,1,2": (baseUrl) => new LabelReadMethod({ baseUrl, api: "chat", seeds: SEEDS }),
};
const methods: Record<string, Maker> = profiles ? profileMethods : {
  systemone: (baseUrl) => new SystemOneMethod({ baseUrl }),
  decisions: (baseUrl) => new DecisionsMethod({ baseUrl }),
  "label-read": (baseUrl) => new LabelReadMethod({ baseUrl }),
  "label-read seeds 0,1,2": (baseUrl) => new LabelReadMethod({ baseUrl, seeds: [0, 1, 2] }),
  "label-read, older vLLM (top-k)": (baseUrl) => new LabelReadMethod({ baseUrl }),
};
const engineFor: Record<string, SimEngineOptions> = { "label-read, older vLLM (top-k)": { logprobTokenIds: false } };

const results: Array<{ tokenizer: TokenizerName; profile: VllmProfile | "structured-seed"; method: string; realistic: RunFigures; best: RunFigures }> = [];
for (const tokenizer of tokenizers) {
  const tokenizerOption: SimEngineOptions = tokenizer === "builtin" ? {} : { tokenizer: await loadHfTokenizer(tokenizer) };
  for (const profile of profiles ?? [undefined]) {
    for (const [name, make] of Object.entries(methods)) {
      if (only && !only.some((o) => name.startsWith(o))) continue;
      const extra: SimEngineOptions = { ...(engineFor[name] ?? {}), ...(bos ? { bos: true } : {}), ...(profile ? { vllm: profile } : {}), ...tokenizerOption };
      const realistic = await run(make, sample, { ...extra, ...(kvCacheTokens ? { kvCacheTokens } : {}) }, concurrency);
      const best = await run(make, sample, { ...extra, kvCacheTokens: Number.MAX_SAFE_INTEGER }, 1);
      results.push({ tokenizer, profile: profile ?? "structured-seed", method: name, realistic, best });
      process.stderr.write(`${tokenizer} ${profile ?? "default"} ${name}: ${JSON.stringify({ req: realistic.inference_requests_per_record, tok: realistic.tokenize_requests_per_record, prompt: realistic.prompt_tokens_per_record, hit: realistic.prefix_cache_hit_rate, best: best.prefix_cache_hit_rate, probe: realistic.probe_requests, by: realistic.answered_by, errors: realistic.errors, wall: realistic.wall_s })}\n`);
    }
  }
}

const figures = {
  benchmark: "methods",
  node: process.version,
  cpus: cpus().length,
  cpu_model: cpus()[0]?.model ?? "",
  measured_at: new Date().toISOString(),
  suite: { dir: suiteDir, records: sample.suiteRecords, tracks: sample.tracks },
  sample: { per_track: perTrack, records: sample.records.length, questions: sample.questions },
  concurrency,
  kv_cache_tokens: kvCacheTokens ?? 1_000_000,
  bos,
  profiles: profiles ?? null,
  tokenizers,
  label_read_template: { version: LABEL_READ_TEMPLATE_VERSION, sha256: LABEL_READ_TEMPLATE_SHA256 },
  results,
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(figures, null, 2) + "\n");
process.stdout.write(JSON.stringify(figures, null, 2) + "\n");

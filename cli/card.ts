// udm-orch card verify | sign | reproduce: checks a run card's seal (and signature), signs a sound
// card, and reruns its setup to see whether the result reproduces within the protocol's ±2%.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { CheckFailedError, UdmError, UsageError } from "../common/errors.js";
import { verifyCard, fingerprintDifferences, compareHeadlines, reproduceSetupProblem, REPRODUCE_TOLERANCE, sealCard, signCard, writeCard, readTrustedKeys, signatureTier, type RunCard, type SignatureCheck } from "../card/index.js";
import { runEmbedded } from "./embedded-run.js";
import { EMBEDDED_RUN_DEFAULTS } from "../run/index.js";
import { parseMetricsListen } from "../common/metrics/index.js";
import { csv, intArg, numberArg, opt, localOpt } from "./options.js";
import { printable } from "../common/printable.js";
import { engineUrl } from "./engine-methods.js";
import { parseGpuHourUsd, signKeyFrom, signKeyOption } from "./flags/card-flags.js";
import { flagGroup, flagOptions } from "./flag-group.js";
import { SUITE_FLAG, type ScopeOptions } from "./flags/scope-flags.js";
import { isTokenizerName, TOKENIZER_NAMES, type TokenizerName } from "../sim/index.js";

/** --suite of `card reproduce`: the card's run.json names it. */
const CARD_SUITE_FLAGS = flagGroup<ScopeOptions>({}, [{ ...SUITE_FLAG, description: "suite directory", defaultText: "the suite_root of run.json beside the card", mandatory: false }]);

interface ReproduceFlags {
  engine?: string;
  sim?: string;
  suite?: string;
  out?: string;
  simOracle?: string;
  simAccuracy?: string;
  simTokenizer?: string;
  gpuHourUsd?: string;
  engineReadyTimeoutMs?: string;
  signKey?: string;
  metrics: string;
}

export function register(program: Command): void {
  const card = program.command("card").description("run cards: verify their seal, reproduce their result");
  card
    .command("verify")
    .description("recompute each card's fingerprint and run_card_hash, rehash its results files and check its signature; exit 1 naming what differs, or when the run is not complete")
    .argument("<files...>", "run-card.json files")
    .addOption(opt("--suite <dir>", "also recompute every score of the card from its results files against this suite (exit 1 naming each score that differs)"))
    .addOption(opt("--trusted-keys <dir>", "ed25519 public keys (*.pem) whose signatures are trusted: a card not signed by one of them fails (exit 1)"))
    .addOption(opt("--allow-incomplete", "a sound card of a run that is not complete (complete_with_errors, running, cancelled, failed) passes (exit 0) with a note"))
    .action(async (files: string[], flags: { suite?: string; trustedKeys?: string; allowIncomplete?: boolean }) => {
      if (flags.suite !== undefined && !existsSync(flags.suite)) throw new UsageError(`--suite: no such directory: ${flags.suite}`);
      const trustedKeys = flags.trustedKeys !== undefined ? readTrustedKeys(flags.trustedKeys) : undefined;
      const problems: string[] = [];
      const invalid: string[] = [];
      for (const file of files) {
        const v = await verifyCard(file, { ...(flags.suite !== undefined ? { suiteDir: flags.suite } : {}), ...(trustedKeys ? { trustedKeys } : {}) });
        if (!v.card) {
          // No run card (bad JSON, a field of the wrong type or out of range): one line naming the file and field.
          invalid.push(printable(v.problems.join("; ")));
          continue;
        }
        if (v.problems.length === 0) {
          const c = v.card!;
          process.stdout.write(
            `${file}: verifies (fingerprint ${c.fingerprint.slice(0, 12)}, hash ${c.run_card_hash.slice(0, 12)}, ` +
              `${v.resultsPresent ? `${v.filesChecked} results files rehashed` : "results files not beside the card: hash only"}` +
              `${v.scoresRecomputed ? `, scores recomputed against ${flags.suite}` : ""}, ${signatureText(v.signature)})\n`,
          );
          // The seal is sound, but the run it seals is not a complete one: a failed check unless allowed.
          if (c.status !== "complete") {
            const line = `status ${c.status}${c.status === "complete_with_errors" ? ` (${c.scores.errors} of ${c.dataset.entry_count} records errored)` : ""}: not a complete run`;
            if (flags.allowIncomplete) process.stdout.write(`  note: ${line} (--allow-incomplete)\n`);
            else {
              process.stdout.write(`  NOT COMPLETE: ${line}\n`);
              problems.push(`${file}: ${line}`);
            }
          }
          if (trustedKeys && !(v.signature.state === "valid" && v.signature.trusted)) {
            const line = v.signature.state === "valid" ? `signed by key ${v.signature.keyId.slice(0, 16)}, which is not in --trusted-keys ${flags.trustedKeys}` : `not signed (--trusted-keys ${flags.trustedKeys} asks for a trusted signature)`;
            process.stdout.write(`  UNTRUSTED: ${line}\n`);
            problems.push(`${file}: ${line}`);
          }
        } else {
          process.stdout.write(`${printable(file)}: DOES NOT VERIFY\n${v.problems.map((p) => `  - ${printable(p)}`).join("\n")}\n`);
          problems.push(...v.problems.map((p) => `${file}: ${p}`));
        }
      }
      if (invalid.length > 0) throw new UsageError(invalid.join("\n"));
      if (problems.length > 0) throw new CheckFailedError(problems.map(printable));
    });

  card
    .command("sign")
    .description("sign run cards that verify with an ed25519 private key (the signature goes into the card; its run_card_hash is unchanged)")
    .argument("<files...>", "run-card.json files")
    .addOption(opt("--sign-key <file>", "ed25519 private key in PEM (openssl genpkey -algorithm ed25519 -out key.pem)").makeOptionMandatory())
    .action(async (files: string[], flags: { signKey: string }) => {
      const key = signKeyFrom(flags)!;
      const problems: string[] = [];
      for (const file of files) {
        const v = await verifyCard(file);
        if (!v.card) throw new UsageError(printable(v.problems.join("; ")));
        // Only a sound card is signed: a signature vouches for what the card says.
        if (v.problems.length > 0) {
          problems.push(...v.problems.map((p) => `${file}: ${p}`));
          process.stdout.write(`${printable(file)}: DOES NOT VERIFY, not signed\n${v.problems.map((p) => `  - ${printable(p)}`).join("\n")}\n`);
          continue;
        }
        const signed = signCard(v.card, key);
        writeCard(file, signed);
        process.stdout.write(`${file}: signed by key ${signed.signature!.key_id.slice(0, 16)} (hash ${signed.run_card_hash.slice(0, 12)})\n`);
      }
      if (problems.length > 0) throw new CheckFailedError(problems.map(printable));
    });

  const reproduce = card
    .command("reproduce")
    .description("rerun a card's exact setup into a new out dir; every headline within ±2% marks the new card `reproduced`")
    .argument("<file>", "run-card.json to reproduce")
    .addOption(opt("--engine <urls>", "comma-separated engine base URLs serving the card's model"))
    .addOption(opt("--sim <n>", "simulated engines instead of --engine"));
  for (const o of flagOptions(CARD_SUITE_FLAGS)) reproduce.addOption(o);
  reproduce
    .addOption(localOpt("--out <dir>", "where to write the rerun (default: <card dir>-reproduce)"))
    .addOption(opt("--sim-oracle <file>", "simulated engines: oracle side file (or suite dir) with gold"))
    .addOption(opt("--sim-accuracy <q>", "simulated engines: oracle accuracy in [0,1]"))
    .addOption(opt("--sim-tokenizer <name>", `simulated engines: the tokenizer (${TOKENIZER_NAMES.join(", ")}; default builtin), as the card's run used (its model id says: sim/pseudo-<tokenizer>)`))
    .addOption(opt("--gpu-hour-usd <usd>", "price of one GPU-hour (default: the card's)"))
    .addOption(opt("--engine-ready-timeout-ms <ms>", `engines not ready after this long are reported; when none is, the rerun fails (default ${EMBEDDED_RUN_DEFAULTS.engineReadyTimeoutMs})`))
    .addOption(signKeyOption())
    .addOption(opt("--metrics <host:port>", "serve /metrics and the live run page of the rerun on this address, e.g. 127.0.0.1:9470 (off: none)", "off"))
    .action(async (file: string, flags: ReproduceFlags) => {
      const engines = csv(flags.engine)?.map(engineUrl);
      const signKey = signKeyFrom(flags);
      const verdict = await verifyCard(file);
      if (!verdict.card) throw new UsageError(printable(verdict.problems.join("; ")));
      if (verdict.problems.length > 0) throw new UdmError(`${file} does not verify; a changed card cannot be reproduced:\n${verdict.problems.map((p) => `  - ${printable(p)}`).join("\n")}`);
      const original = verdict.card;
      const setupProblem = reproduceSetupProblem(original);
      if (setupProblem) throw new UsageError(`${file}: cannot rerun this setup: ${setupProblem}`);
      if (original.status !== "complete") throw new UsageError(`${file}: the run is ${original.status}; only a complete run can be reproduced`);
      const sim = intArg("sim", flags.sim, 1);
      if (!engines?.length && !sim) throw new UsageError("give --engine URL[,URL...] or --sim N");
      const cardDir = dirname(resolve(file));
      const runJson = readRunJsonBeside(cardDir);
      const suiteDir = flags.suite ?? runJson?.suite_root;
      if (!suiteDir) throw new UsageError(`no --suite given and no run.json with suite_root beside ${file}`);
      const out = resolve(flags.out ?? `${cardDir}-reproduce`);
      if (out === cardDir) throw new UsageError("--out must differ from the card's directory");
      const accuracy = numberArg("sim-accuracy", flags.simAccuracy, 0);
      const engineReadyTimeoutMs = intArg("engine-ready-timeout-ms", flags.engineReadyTimeoutMs, 1);
      const metrics = parseMetricsListen(flags.metrics);
      const m = original.method;
      const result = await runEmbedded({
        suiteDir,
        outDir: out,
        ...(engines ? { engines } : {}),
        ...(sim ? { sim } : {}),
        simOptions: {
          ...(flags.simOracle ? { oracle: flags.simOracle } : {}),
          ...(accuracy !== undefined ? { accuracy } : {}),
          ...(flags.simTokenizer ? { tokenizer: simTokenizerArg(flags.simTokenizer) } : {}),
        },
        method: { method: m.engine_method, seeds: [...m.seeds], temperature: m.temperature, model: runJson?.method?.model ?? "" },
        tracks: original.dataset.tracks,
        // A limited card reproduces over the same records.
        ...(original.dataset.limit ? { limit: original.dataset.limit } : {}),
        ...(m.batch_size !== null ? { capacity: m.batch_size } : {}),
        methodClass: m.method_class,
        gpuHourUsd: flags.gpuHourUsd !== undefined ? parseGpuHourUsd(flags.gpuHourUsd) : original.totals.gpu_hour_usd,
        printTracks: false,
        ...(engineReadyTimeoutMs !== undefined ? { engineReadyTimeoutMs } : {}),
        ...(signKey ? { signKey } : {}),
        ...(metrics ? { metrics } : {}),
      });
      const fresh = result.card;
      if (fresh.dataset.sha256 !== original.dataset.sha256) throw new UdmError(`the suite at ${suiteDir} is not the card's (identity ${fresh.dataset.sha256}, card ${original.dataset.sha256})`);
      if (fresh.fingerprint !== original.fingerprint) {
        const diffs = fingerprintDifferences(original, fresh);
        process.stdout.write(
          diffs.length > 0
            ? `note: the rerun's fingerprint ${fresh.fingerprint.slice(0, 12)} differs from the card's ${original.fingerprint.slice(0, 12)}: another setup in ${diffs.length === 1 ? "one field" : `${diffs.length} fields`}:\n${diffs.map((d) => `  ${printable(d)}\n`).join("")}`
            : `note: the card (format ${original.card_format}) and the rerun (format ${fresh.card_format}) have fingerprints of two rules; every field of the card's rule agrees: the same setup\n`,
        );
      }
      const cmp = compareHeadlines(original, fresh);
      const resealed: RunCard = sealCard({
        ...fresh,
        verification_tier: cmp.within ? "reproduced" : fresh.verification_tier,
        reproduction: {
          of_run_id: original.run_id,
          of_fingerprint: original.fingerprint,
          of_run_card_hash: original.run_card_hash,
          tolerance: REPRODUCE_TOLERANCE,
          compared: cmp.compared,
          outside: cmp.outside,
          within: cmp.within,
        },
      });
      const reproduced = signKey ? signCard(resealed, signKey) : resealed;
      writeCard(result.cardPath, reproduced);
      process.stdout.write(
        `compared ${cmp.compared} headlines of ${file} with the rerun in ${out}: ` +
          (cmp.within ? `all within ±${REPRODUCE_TOLERANCE * 100}%: reproduced\n` : `${cmp.outside.length} outside ±${REPRODUCE_TOLERANCE * 100}%: not reproduced\n`) +
          cmp.outside.map((o) => `  ${o.track}: ${fmt(o.original)} -> ${fmt(o.reproduced)}\n`).join("") +
          `new card ${result.cardPath} (verification tier ${reproduced.verification_tier})\n`,
      );
      if (!cmp.within) throw new UdmError(`not reproduced: ${cmp.outside.map((o) => o.track).join(", ")} outside ±${REPRODUCE_TOLERANCE * 100}%`);
    });
}

function signatureText(s: SignatureCheck): string {
  if (s.state === "valid") return `${signatureTier(s)}: key ${s.keyId.slice(0, 16)}`;
  return signatureTier(s);
}

function fmt(x: number | null): string {
  return x === null ? "n/a" : x.toFixed(4);
}

function readRunJsonBeside(dir: string): { suite_root?: string; method?: { model?: string } } | undefined {
  const p = join(dir, "run.json");
  if (!existsSync(p)) return undefined;
  try {
    return JSON.parse(readFileSync(p, "utf8")) as { suite_root?: string; method?: { model?: string } };
  } catch {
    return undefined;
  }
}

function simTokenizerArg(value: string): TokenizerName {
  if (!isTokenizerName(value)) throw new UsageError(`--sim-tokenizer must be one of ${TOKENIZER_NAMES.join(", ")}, got ${value}`);
  return value;
}

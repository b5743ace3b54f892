// The engine methods against every vLLM profile of the sim, with and without seeds, as whole runs:
// methods (systemone, decisions, label-read over completions and over chat) x profiles (legacy,
// structured-seed, current) x seeds ([] and [0, 1, 2]) x tokenizers. An oracle engine at accuracy
// 1 must give 1 on every track (a method that maps labels, options or seeds back wrong shows
// here), no record may end with errors, and the run card names the methods that answered. One
// engine per profile and tokenizer, shared by that profile's runs; a tiny suite (no routing track,
// whose payloads repeat with other gold); then, on `current`, a state over the context is skipped
// in exactly one request by every method (methods-matrix.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { startSimEngine, type SimEngine, type SimEngineOptions } from "../../sim/engine/server.js";
import { oracleFromSuite, type Oracle } from "../../sim/engine/model/oracle.js";
import type { VllmProfile } from "../../sim/engine/vllm-profile.js";
import { EmbeddedRun } from "../../run/index.js";
import { createLogger } from "../../common/log.js";
import { tempDirs } from "../support/temp-dirs.js";
import { loadHfTokenizer, type EngineTokenizer, type TokenizerName } from "../../sim/index.js";

const PROFILES: readonly VllmProfile[] = ["legacy", "structured-seed", "current"];
/** A 3-way choice; a yes/no and a 5-way choice in one record; a 60-way choice (over 26: label-read). */
const TRACKS = ["aiv-sa24-easy", "deepedu", "massive-vi-vn"];
const OVER_26 = "massive-vi-vn";
const SEED_SETS: ReadonlyArray<readonly number[]> = [[], [0, 1, 2]];

interface MethodCell {
  name: string;
  method: "systemone" | "decisions" | "label-read";
  api: "completions" | "chat";
}
const METHODS: readonly MethodCell[] = [
  { name: "systemone", method: "systemone", api: "completions" },
  { name: "decisions", method: "decisions", api: "completions" },
  { name: "label-read (completions)", method: "label-read", api: "completions" },
  { name: "label-read (chat)", method: "label-read", api: "chat" },
];

/**
 * The matrix for one tokenizer (one test file each, so vitest runs them side by side): the
 * built-in one, or a real one (loaded once per file; its runs take most of the file's time).
 */
export function describeMethodsMatrix(tokenizer: TokenizerName): void {
const tmp = tempDirs("udm-matrix-");
let suite: string;
let oracle: Oracle;
let engineTokenizer: EngineTokenizer | undefined;
const engines = new Map<string, Promise<SimEngine>>();

beforeAll(async () => {
  suite = tmp();
  await makeSuite({ out: suite, scale: "small", seed: 7, tracks: TRACKS });
  oracle = await oracleFromSuite(suite);
  if (tokenizer !== "builtin") engineTokenizer = await loadHfTokenizer(tokenizer);
}, 120_000);

afterAll(async () => {
  await Promise.all([...engines.values()].map(async (e) => (await e).close()));
});

/** The one engine of a profile and tokenizer (started by the first of its runs). */
function engineFor(profile: VllmProfile): Promise<SimEngine> {
  const key = profile;
  let e = engines.get(key);
  if (!e) {
    const options: SimEngineOptions = { model: "oracle", seed: 3, maxModelLen: 32768, oracle, accuracy: 1, vllm: profile };
    if (engineTokenizer) options.tokenizer = engineTokenizer;
    e = startSimEngine(options);
    engines.set(key, e);
  }
  return e;
}

/** Which methods may answer: a batched method hands >26-option choices to label-read, and everything when its endpoint is not served. */
function expectedAnswerers(cell: MethodCell, profile: VllmProfile): { must: string[]; may: string[] } {
  if (cell.method === "label-read") return { must: ["label-read"], may: ["label-read"] };
  if (profile === "legacy") return { must: ["label-read"], may: ["label-read"] };
  return { must: [cell.method, "label-read"], may: [cell.method, "label-read"] };
}

describe(`methods x vLLM profiles x seeds, tokenizer ${tokenizer}`, () => {
  describe.each(PROFILES)("profile %s", (profile) => {
    const cells = METHODS.flatMap((m) => SEED_SETS.map((seeds) => ({ ...m, seeds })));
    // Concurrent: a run mostly waits (gRPC, timers), and the runs of a profile share only the engine.
    it.concurrent.each(cells.map((c) => [`${c.name}, seeds [${c.seeds.join(",")}]`, c] as const))("%s: an oracle at accuracy 1 scores 1, no errors, the card names who answered", async (_label, cell) => {
      const engine = await engineFor(profile);
      const run = await EmbeddedRun.create({
        suiteDir: suite,
        outDir: tmp(),
        engines: [engine.url],
        method: { method: cell.method, seeds: [...cell.seeds], temperature: 0, model: "" },
        labelReadApi: cell.api,
        printTracks: false,
        retries: 1,
        logger: createLogger("matrix", "silent"),
      });
      const { card, metrics } = await run.run();
      expect(card.status).toBe("complete");
      expect(card.scores.errors).toBe(0);
      expect(card.scores.missing).toBe(0);
      const below = Object.entries(metrics!.tracks).filter(([, t]) => t.headline.value !== 1).map(([name, t]) => `${name} ${t.headline.metric}=${t.headline.value}`);
      expect(below).toEqual([]);
      expect(Object.keys(metrics!.tracks).sort()).toEqual([...TRACKS].sort());
      const answered = card.method.answered_by ?? {};
      const { must, may } = expectedAnswerers(cell, profile);
      expect(Object.keys(answered).sort()).toEqual([...new Set(must)].sort());
      for (const m of Object.keys(answered)) expect(may).toContain(m);
      const shares = Object.values(answered).reduce((s, a) => s + a.share, 0);
      expect(shares).toBeCloseTo(1, 5);
      if (cell.method !== "label-read" && profile !== "legacy") {
        // Only the 60-way track's questions leave the method.
        const over26 = card.scores.tracks[OVER_26]!.records;
        expect(answered["label-read"]!.questions).toBe(over26);
      }
    }, 60_000);
  });
});
}

// The run card hash's known answer (docs/run-card.md "Run card hash"): checked against Python's
// hashlib.sha256(json.dumps(card, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).
import { describe, expect, it } from "vitest";
import { runCardHash, sealCard } from "../../card/card-hash.js";

// Keys out of order at every depth, an array kept in its order, non-ASCII text, a null.
const CARD = {
  format: 2,
  run_card_hash: "recorded-before",
  status: "complete",
  method: { model_slug: "sim/pseudo", condition: "systemone", temperature: 0 },
  scores: { summary: { v1_mean_partial: 0.4375, v1_tracks: 2 }, tracks: { vihsd: { headline: { value: 0.5, ci_low: 0.25, ci_high: 0.75 } } } },
  results_files: { "b.jsonl": "0".repeat(64), "a.jsonl": "f".repeat(64) },
  notes: "Tiếng Việt",
  tools: ["z", "a"],
  batch: null,
};
const DIGEST = "f5fa4279b58d9bc853266d6f4302cd006d02abe9dc23f2b50dc43379f6155638";

describe("run card hash", () => {
  it("a fixed card gives a fixed digest, whatever run_card_hash held", () => {
    expect(runCardHash(CARD)).toBe(DIGEST);
    expect(sealCard(CARD).run_card_hash).toBe(DIGEST);
    expect(runCardHash({ ...CARD, run_card_hash: "" })).toBe(DIGEST);
  });

  it("an array's order, a key's case and a number's value are sealed", () => {
    expect(runCardHash({ ...CARD, tools: ["a", "z"] })).not.toBe(DIGEST);
    expect(runCardHash({ ...CARD, notes: "tiếng Việt" })).not.toBe(DIGEST);
    expect(runCardHash({ ...CARD, scores: { ...CARD.scores, summary: { v1_mean_partial: 0.4376, v1_tracks: 2 } } })).not.toBe(DIGEST);
  });
});

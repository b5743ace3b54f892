// The fingerprint's known answers: the format 2 rule (canonical JSON of the named components and
// the scope) is unambiguous where the format 1 rule (sorted parts joined without a separator) was
// not, and format 1 cards keep the digest they were sealed with.
import { describe, expect, it } from "vitest";
import { componentsOfCard, fingerprint, legacyFingerprint, type FingerprintComponents } from "../../card/fingerprint.js";

const BASE: FingerprintComponents = {
  cardFormat: 2,
  datasetSha256: "d".repeat(64),
  modelSlug: "sim/pseudo",
  condition: "systemone",
  systemPromptSha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  temperature: 0,
  harnessVersion: "0.1.0",
  seeds: [],
  batchSize: null,
  toolsEnabled: [],
  scope: { tracks: ["vihsd", "aiv-nli500"], families: ["toxicity", "nli"], limit: null },
};

/** BASE under the format 3 rule (checked against Python's hashlib as the format 2 digests were). */
const FORMAT3_DIGEST = "be39b40748076f81bf7b4242d6a2fc367fbd010857df6b3a53cb914a8b32ec47";

describe("fingerprint", () => {
  // The digests were checked against Python's hashlib over json.dumps(sort_keys=True, separators=(",", ":")).
  it("format 2: a fixed set of components gives a fixed digest", () => {
    expect(fingerprint(BASE)).toBe("562f626275e99cf33cd674e9d5d5849536f0863d3410a655c56bf4ee0c44c2fd");
    // Order of tracks, families and tools does not matter; their content does.
    expect(fingerprint({ ...BASE, scope: { tracks: ["aiv-nli500", "vihsd"], families: ["nli", "toxicity"], limit: null } })).toBe(fingerprint(BASE));
    expect(fingerprint({ ...BASE, temperature: 0.7, batchSize: 8, toolsEnabled: ["search", "calc"] })).toBe("c7a10ce4045d820b0f14566c525fd3eac556e07e8ea728d5fc3db1b42f3ace84");
  });

  it("format 2: a card's dataset.limit (--limit) is in its fingerprint's scope; a card without one keeps the digest it had", () => {
    const card = {
      card_format: 2,
      harness_version: "0.1.0",
      method: { model_slug: "sim/pseudo", condition: "systemone", system_prompt_sha256: BASE.systemPromptSha256, temperature: 0, batch_size: null, tools_enabled: [] },
      dataset: { sha256: "d".repeat(64), tracks: ["vihsd", "aiv-nli500"], families: ["toxicity", "nli"] },
    };
    expect(fingerprint(componentsOfCard(card))).toBe("562f626275e99cf33cd674e9d5d5849536f0863d3410a655c56bf4ee0c44c2fd");
    const limited = componentsOfCard({ ...card, dataset: { ...card.dataset, limit: 2 } });
    expect(limited.scope.limit).toBe(2);
    expect(fingerprint(limited)).not.toBe(fingerprint(componentsOfCard(card)));
  });

  it("format 2: model `sim/pseudosystemone` with condition \"\" is not `sim/pseudo` with `systemone`", () => {
    const other = { ...BASE, modelSlug: "sim/pseudosystemone", condition: "" };
    // The collision the format 1 rule has, kept only to verify old cards:
    expect(legacyFingerprint(other)).toBe(legacyFingerprint(BASE));
    expect(fingerprint(other)).not.toBe(fingerprint(BASE));
  });

  it("format 2: the scope is part of it (a sweep widened from one track to two is another setup)", () => {
    const narrow = { ...BASE, scope: { tracks: ["vihsd"], families: ["toxicity"], limit: null } };
    expect(fingerprint(narrow)).not.toBe(fingerprint(BASE));
  });

  it("format 3: the batch size is not in it (scheduling), the seeds are (in any order)", () => {
    const f3 = { ...BASE, cardFormat: 3 };
    expect(fingerprint(f3)).toBe(FORMAT3_DIGEST);
    expect(fingerprint({ ...f3, batchSize: 8 })).toBe(fingerprint(f3));
    expect(fingerprint({ ...f3, seeds: [2, 0, 1] })).toBe(fingerprint({ ...f3, seeds: [0, 1, 2] }));
    expect(fingerprint({ ...f3, seeds: [0, 1, 2] })).not.toBe(fingerprint(f3));
    // Format 2 cards keep their rule: the batch size in, the seeds out.
    expect(fingerprint({ ...BASE, batchSize: 8 })).not.toBe(fingerprint(BASE));
    expect(fingerprint({ ...BASE, seeds: [0, 1, 2] })).toBe(fingerprint(BASE));
  });

  it("format 1 cards are recomputed by the format 1 rule: their recorded digest still verifies", () => {
    expect(fingerprint({ ...BASE, cardFormat: 1 })).toBe("0278a8ad2950a218067475af52835c39433d4b08d72307ffa5f5924ad451ceed");
    const card = {
      card_format: 1,
      harness_version: "0.1.0",
      method: { model_slug: "sim/pseudo", condition: "systemone", system_prompt_sha256: BASE.systemPromptSha256, temperature: 0, batch_size: null, tools_enabled: [] },
      dataset: { sha256: "d".repeat(64), tracks: ["vihsd"] },
    };
    expect(fingerprint(componentsOfCard(card))).toBe("0278a8ad2950a218067475af52835c39433d4b08d72307ffa5f5924ad451ceed");
    expect(fingerprint(componentsOfCard({ ...card, card_format: 2, dataset: { ...card.dataset, families: ["toxicity"] } }))).not.toBe("0278a8ad2950a218067475af52835c39433d4b08d72307ffa5f5924ad451ceed");
  });

  it("format 1 with a batch size and tools: Python's hashlib over the sorted parts gives the same digest", () => {
    // sha256("".join(sorted([..., "0.7", "0.1.0", "8", json.dumps(sorted(tools), separators=(",", ":"))])))
    expect(fingerprint({ ...BASE, cardFormat: 1, temperature: 0.7, batchSize: 8, toolsEnabled: ["search", "calc"] })).toBe(
      "07cbb98c70abb9ffe072450e157ed8e4ca652107f15c5e3fbec0e48e9e574c03",
    );
  });

  it("a card that records no families has an empty family scope", () => {
    expect(componentsOfCard({ card_format: 1, harness_version: "0.1.0", method: { model_slug: "m", condition: "", system_prompt_sha256: "", temperature: 0, batch_size: null, tools_enabled: [] }, dataset: { sha256: "d", tracks: ["vihsd"] } }).scope).toEqual({
      tracks: ["vihsd"],
      families: [],
      limit: null,
    });
  });

  it("a card that records no tracks or families: an empty scope, the same fingerprint as the components with one", () => {
    const card = {
      card_format: 2,
      harness_version: "0.1.0",
      method: { model_slug: "sim/pseudo", condition: "systemone", system_prompt_sha256: BASE.systemPromptSha256, temperature: 0, batch_size: null, tools_enabled: [] },
      dataset: { sha256: "d".repeat(64) },
    };
    expect(componentsOfCard(card).scope).toEqual({ tracks: [], families: [], limit: null });
    expect(fingerprint(componentsOfCard(card))).toBe(fingerprint({ ...BASE, scope: { tracks: [], families: [], limit: null } }));
  });
});

// The seeds a card records enter its format 3 fingerprint through componentsOfCard; a card that
// records none (older cards, a method without seeds) has the fingerprint of an empty seed list.
import { describe, expect, it } from "vitest";
import { componentsOfCard, fingerprint } from "../../card/fingerprint.js";

/** fingerprint.test.ts's BASE components under the format 3 rule, seeds []. */
const FORMAT3_DIGEST = "be39b40748076f81bf7b4242d6a2fc367fbd010857df6b3a53cb914a8b32ec47";

const card = {
  card_format: 3,
  harness_version: "0.1.0",
  method: { model_slug: "sim/pseudo", condition: "systemone", system_prompt_sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", temperature: 0, batch_size: null, tools_enabled: [] },
  dataset: { sha256: "d".repeat(64), tracks: ["vihsd", "aiv-nli500"], families: ["toxicity", "nli"] },
};

describe("componentsOfCard: method.seeds", () => {
  it("a card without seeds has the empty seed list's fingerprint", () => {
    expect(componentsOfCard(card).seeds).toEqual([]);
    expect(fingerprint(componentsOfCard(card))).toBe(FORMAT3_DIGEST);
    expect(fingerprint(componentsOfCard({ ...card, method: { ...card.method, seeds: [] } }))).toBe(FORMAT3_DIGEST);
  });

  it("the seeds a card records are its components' seeds, and change its fingerprint", () => {
    const seeded = { ...card, method: { ...card.method, seeds: [2, 0, 1] } };
    expect(componentsOfCard(seeded).seeds).toEqual([2, 0, 1]);
    expect(fingerprint(componentsOfCard(seeded))).not.toBe(FORMAT3_DIGEST);
  });
});

// common/catalogue.ts keeps its own small table of the 44 tracks (common/ may not import sim/):
// held here to the suite maker's track-shapes.json, and that file to the content of the project's
// shared/data/udm-eval-v1-tracks.json it copies (by digest: the test reads nothing outside the repository).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../common/canonical-json.js";
import { FAMILY_PILLAR, isScoredInV1, pillarOf, V1_SCORED_TRACKS, V1_TRACK_COUNT, V1_TRACKS } from "../../common/catalogue.js";
import { SUITE_SHAPE } from "../../sim/suite-maker/track-shapes.js";

/**
 * sha256 of the canonical JSON of shared/data/udm-eval-v1-tracks.json (outside the repository),
 * taken when track-shapes.json was last checked against it. A change of either file changes it.
 */
const SHARED_TRACKS_CANONICAL_SHA256 = "945a410485e332e6352c0242bb704c60f00a03a94765b210ab746994b60fd08c";

describe("track catalogue", () => {
  it("lists the 44 tracks of track-shapes.json with their families, in the same order", () => {
    expect(V1_TRACKS).toHaveLength(44);
    expect(V1_TRACKS).toEqual(SUITE_SHAPE.tracks.map((t) => ({ track: t.track, family: t.family })));
  });

  it("gives every track the pillar and v1 scoring of track-shapes.json", () => {
    for (const t of SUITE_SHAPE.tracks) {
      expect(pillarOf(t.family), t.track).toBe(t.pillar);
      expect(isScoredInV1(t.track), t.track).toBe(t.scored_in_v1);
    }
    expect(new Set(Object.keys(FAMILY_PILLAR))).toEqual(new Set(SUITE_SHAPE.tracks.map((t) => t.family)));
  });

  it("has 43 scored tracks: every track but routerbench, in catalogue order", () => {
    expect(V1_SCORED_TRACKS).toHaveLength(V1_TRACK_COUNT);
    expect(V1_SCORED_TRACKS).toEqual(SUITE_SHAPE.tracks.filter((t) => t.scored_in_v1).map((t) => t.track));
    expect(V1_SCORED_TRACKS).not.toContain("routerbench");
  });

  it("track-shapes.json holds the content of shared/data/udm-eval-v1-tracks.json", () => {
    expect(createHash("sha256").update(canonicalJson(SUITE_SHAPE)).digest("hex")).toBe(SHARED_TRACKS_CANONICAL_SHA256);
  });
});

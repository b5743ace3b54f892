// common/catalogue.ts keeps its own small table of the 44 tracks (common/ may not import sim/):
// held here to the suite maker's track-shapes.json and to shared/data/udm-eval-v1-tracks.json.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FAMILY_PILLAR, isScoredInV1, pillarOf, V1_SCORED_TRACKS, V1_TRACK_COUNT, V1_TRACKS } from "../../common/catalogue.js";
import { SUITE_SHAPE } from "../../sim/suite-maker/track-shapes.js";

/** The shared data file of the project (outside the repository; UDM_TRACKS_JSON overrides). */
const SHARED_TRACKS = process.env.UDM_TRACKS_JSON ?? "/work/shared/data/udm-eval-v1-tracks.json";

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

  it.skipIf(!existsSync(SHARED_TRACKS))("track-shapes.json is shared/data/udm-eval-v1-tracks.json", () => {
    const shared = JSON.parse(readFileSync(SHARED_TRACKS, "utf8")) as unknown;
    expect(SUITE_SHAPE).toEqual(shared);
    const tracks = (shared as { tracks: Array<{ track: string; family: string; scored_in_v1: boolean }> }).tracks;
    expect(V1_TRACKS).toEqual(tracks.map((t) => ({ track: t.track, family: t.family })));
    expect(V1_SCORED_TRACKS).toEqual(tracks.filter((t) => t.scored_in_v1).map((t) => t.track));
  });
});

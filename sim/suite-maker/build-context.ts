// What a track's record builder gets: the shape, its profile, seeded randomness and text.
import type { TrackShape } from "./track-shapes.js";
import { Rng } from "./prng.js";
import { TextGenerator, type TextLang } from "./text.js";
import { profileOf, type TrackProfile } from "./track-profiles.js";
import type { SyntheticRecord } from "./record.js";

export interface BuildContext {
  shape: TrackShape;
  profile: TrackProfile;
  rng: Rng;
  /** Text in the track's language. */
  text: TextGenerator;
  /** English text (routerbench mixes languages; instructions stay English). */
  english: TextGenerator;
  /** A record or group id, unique within the track: `<prefix>:<hex><counter>`. */
  newId(): string;
}

/** Builds the `rows` records of group number `group` (0-based), in file order. */
export type GroupBuilder = (ctx: BuildContext, group: number, rows: number) => SyntheticRecord[];

export function createContext(shape: TrackShape, seed: number): BuildContext {
  const profile = profileOf(shape.track);
  const rng = Rng.from(seed, shape.track, "records");
  const lang: TextLang = shape.lang === "en" ? "en" : "vi";
  let counter = 0;
  return {
    shape,
    profile,
    rng,
    text: new TextGenerator(rng, lang, profile.domain),
    english: new TextGenerator(rng, "en", profile.domain),
    newId: () => `${profile.idPrefix}:${rng.hex8()}${(counter++).toString(16).padStart(6, "0")}`,
  };
}

/** metadata.origin: "native/synthetic/translated" tracks draw one per record. */
export function originOf(ctx: BuildContext): string {
  const choices = ctx.shape.origin.split("/");
  return choices.length > 1 ? ctx.rng.pick(choices) : ctx.shape.origin;
}

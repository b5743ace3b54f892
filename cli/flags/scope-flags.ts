// What a command works on: --suite, and --tracks/--families narrowing it (`coordinator`, `run`,
// `score`, `scorer`, `suite verify`, `card reproduce`, `leaderboard`). Declared once here; a command
// whose --suite means something more (optional, found elsewhere) says so with its own description.
import { flagGroup, type FlagSpec } from "../flag-group.js";
import { csv, intArg } from "../options.js";

/** The suite and the part of it in scope. */
export interface ScopeOptions {
  suiteDir: string;
  /** Tracks in scope. @default all */
  tracks?: readonly string[];
  /** Families in scope. @default all */
  families?: readonly string[];
  /** Records per track at most, whole groups, the same every time (a smoke test). @default all */
  limit?: number;
}

const list = (raw: string): string[] => csv(raw) ?? [];

/** --suite, mandatory; `{ ...SUITE_FLAG, description, mandatory: false }` where a command finds it elsewhere. */
export const SUITE_FLAG: FlagSpec<ScopeOptions> = { key: "suiteDir", flags: "--suite <dir>", description: "suite directory (<suite> or <suite>/test)", mandatory: true };

export const TRACKS_FLAG: FlagSpec<ScopeOptions> = { key: "tracks", flags: "--tracks <list>", description: "comma-separated tracks", parse: list, defaultText: "all" };

export const FAMILIES_FLAG: FlagSpec<ScopeOptions> = { key: "families", flags: "--families <list>", description: "comma-separated families", parse: list, defaultText: "all" };

/** --suite, --tracks, --families. */
export const SCOPE_FLAGS = flagGroup<ScopeOptions>({}, [SUITE_FLAG, TRACKS_FLAG, FAMILIES_FLAG]);

/** --suite alone (the run's scope is the run's: `scorer`; or the whole suite: `suite verify`). */
export const SUITE_FLAGS = flagGroup<ScopeOptions>({}, [SUITE_FLAG]);

/** --limit N: records per track at most (whole groups); part of the run's scope and fingerprint. */
export const LIMIT_FLAG: FlagSpec<ScopeOptions> = {
  key: "limit",
  flags: "--limit <n>",
  description: "records per track at most, whole groups (metadata.group_id), the same records every time: a smoke test, marked as a limited scope on the card",
  parse: (raw, flag) => intArg(flag, raw, 1)!,
  defaultText: "all",
};

/** --limit alone (run, coordinator, sweep). */
export const LIMIT_FLAGS = flagGroup<ScopeOptions>({}, [LIMIT_FLAG]);

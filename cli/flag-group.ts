// CLI flags generated from a role's options: a role declares its options once (an interface whose
// fields carry `@default`, and one defaults object that a `with...Defaults()` function applies); a
// flag group here names, for each flag, the option field it fills and how its text is parsed. The
// default shown in --help is read from the role's defaults object, so no default is written twice.
import type { Option } from "commander";
import { opt } from "./options.js";

/** One flag of a group: the option field it fills and how its text becomes the field's value. */
export interface FlagSpec<O> {
  /** The option field this flag fills. */
  key: keyof O & string;
  /** Commander's flag text, e.g. "--lease-ms <ms>". */
  flags: string;
  /** What the flag does; "(default X)" is appended from the group's defaults when there is one. */
  description: string;
  /** Text -> value; throws UsageError naming the flag. Without it the text is the value. */
  parse?: (raw: string, flag: string) => O[keyof O & string];
  /** How the default reads in --help when it is not the value itself (e.g. "the engine's own"). */
  defaultText?: string;
  mandatory?: boolean;
}

/** A group of flags filling one role's options, with that role's defaults for --help. */
export interface FlagGroup<O> {
  specs: ReadonlyArray<FlagSpec<O>>;
  defaults: Partial<O>;
}

export function flagGroup<O>(defaults: Partial<O>, specs: ReadonlyArray<FlagSpec<O>>): FlagGroup<O> {
  return { defaults, specs };
}

function longFlag(flags: string): string {
  return flags.split(/[ ,|]+/).find((f) => f.startsWith("--"))!;
}

/** Commander's camelCase attribute of a long flag ("--lease-ms" -> "leaseMs"). */
export function attributeOf(flags: string): string {
  return longFlag(flags)
    .slice(2)
    .replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function defaultDescription(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.length ? value.join(",") : undefined;
  return String(value);
}

/** The commander options of a group; add them with `for (const o of flagOptions(g)) cmd.addOption(o)`. */
export function flagOptions<O>(group: FlagGroup<O>): Option[] {
  return group.specs.map((s) => {
    const shown = s.defaultText ?? defaultDescription(group.defaults[s.key]);
    const o = opt(s.flags, shown === undefined ? s.description : `${s.description} (default ${shown})`);
    return s.mandatory ? o.makeOptionMandatory() : o;
  });
}

/** The options the given flags set (flags not given are left out: the role's defaults fill them). */
export function optionsFromFlags<O>(group: FlagGroup<O>, values: Record<string, unknown>): Partial<O> {
  const out: Partial<O> = {};
  for (const s of group.specs) {
    const raw = values[attributeOf(s.flags)];
    if (raw === undefined) continue;
    const flag = longFlag(s.flags).slice(2);
    (out as Record<string, unknown>)[s.key] = s.parse && typeof raw === "string" ? s.parse(raw, flag) : raw;
  }
  return out;
}

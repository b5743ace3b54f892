// The {model} placeholder of an agent's --vllm-cmd template. The model name comes from the
// coordinator (a run's Welcome), so it never becomes shell text: the placeholder becomes a
// reference to the environment variable UDM_ENGINE_MODEL, which the engine child gets set to the
// model. The shell expands a variable once and never reads its value as code, so `$(...)`, quotes
// or backticks in a name run nothing, whether the template writes {model}, "{model}" or
// '{model}'. Each of those forms still makes the name exactly one argument: the reference is
// written to suit the quoting around the placeholder.

export const MODEL_PLACEHOLDER = "{model}";
export const MODEL_ENV = "UDM_ENGINE_MODEL";

type Context = "code" | "subshell" | "double" | "single" | "backtick";

/** The template with each {model} replaced by a quoted reference to $UDM_ENGINE_MODEL. */
export function fillModelTemplate(template: string): string {
  const stack: Context[] = ["code"];
  let out = "";
  let i = 0;
  while (i < template.length) {
    const top = stack[stack.length - 1]!;
    if (template.startsWith(MODEL_PLACEHOLDER, i)) {
      // Unquoted: quote it. Within double quotes: already one word. Within single quotes, where
      // nothing expands: close them, expand in double quotes, reopen (one word all the same).
      out += top === "double" ? `\${${MODEL_ENV}}` : top === "single" ? `'"\${${MODEL_ENV}}"'` : `"\${${MODEL_ENV}}"`;
      i += MODEL_PLACEHOLDER.length;
      continue;
    }
    const c = template[i]!;
    out += c;
    i++;
    if (top === "single") {
      if (c === "'") stack.pop();
      continue;
    }
    if (c === "\\") {
      // An escaped character is literal (single quotes aside, handled above).
      if (i < template.length) out += template[i++];
      continue;
    }
    if (c === "$" && template[i] === "(") {
      out += template[i++];
      stack.push("subshell");
      continue;
    }
    if (c === "`") {
      if (top === "backtick") stack.pop();
      else stack.push("backtick");
      continue;
    }
    if (top === "double") {
      if (c === '"') stack.pop();
      continue;
    }
    if (c === "'") stack.push("single");
    else if (c === '"') stack.push("double");
    else if (c === ")" && top === "subshell") stack.pop();
  }
  return out;
}

// Python's repr() and str() of JSON values, as vLLM's messages print them (f-strings with !r,
// str(dict) of a pydantic error, str() of a VLLMValidationError's value).

/** Python's repr of a value. */
export function pyRepr(value: unknown): string {
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\t/g, "\\t").replace(new RegExp(quote, "g"), `\\${quote}`);
    return `${quote}${body}${quote}`;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "object") return `{${Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
  return String(value);
}

/** Python's str() of a value (a str is itself, a list its repr). */
export function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

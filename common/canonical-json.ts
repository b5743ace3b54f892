// Canonical JSON: object keys sorted at every depth, no whitespace, otherwise as JSON.stringify
// writes it (undefined members dropped, undefined in arrays and NaN/Infinity as null). What the run
// card hash (docs/run-card.md), the suite maker's payload_sha256 and the sim oracle's seeds are taken
// over, so equal values always give equal bytes whatever their key order.
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

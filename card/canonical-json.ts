// Canonical JSON of RUN_CARD.md: object keys sorted at every depth, no whitespace. What the
// run card hash is computed over, so the same card always hashes the same whatever its key order.
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    // JSON.stringify turns NaN/Infinity into null, like any JSON writer would.
    return JSON.stringify(value ?? null);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

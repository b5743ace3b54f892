// Canonical JSON (keys sorted, no spaces): the bytes that payload_sha256 hashes.
import { createHash } from "node:crypto";

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  const parts: string[] = [];
  for (const k of keys) if (obj[k] !== undefined) parts.push(JSON.stringify(k) + ":" + canonicalJson(obj[k]));
  return "{" + parts.join(",") + "}";
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

// JSON text with objects whose key order is given (OrderedObject), for request bodies where the
// order of an object's keys carries meaning: a systemone question's criteria are labelled in the
// order sent (A, B, C...), and a JavaScript object cannot hold integer-like keys out of ascending order.
import { JsonText } from "../engine-http.js";

/** An object written with its keys in exactly this order. */
export class OrderedObject {
  constructor(readonly entries: ReadonlyArray<readonly [string, unknown]>) {}
}

function write(value: unknown): string | undefined {
  if (value instanceof OrderedObject) return object(value.entries);
  if (Array.isArray(value)) return `[${value.map((v) => write(v) ?? "null").join(",")}]`;
  if (value !== null && typeof value === "object") return object(Object.entries(value));
  return JSON.stringify(value);
}

function object(entries: ReadonlyArray<readonly [string, unknown]>): string {
  const parts: string[] = [];
  for (const [k, v] of entries) {
    const text = write(v);
    if (text !== undefined) parts.push(`${JSON.stringify(k)}:${text}`); // undefined members are left out, as JSON.stringify does
  }
  return `{${parts.join(",")}}`;
}

/** The body as JSON text, OrderedObjects in their order; everything else as JSON.stringify writes it. */
export function orderedJson(value: unknown): JsonText {
  return new JsonText(write(value) ?? "null");
}

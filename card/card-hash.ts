// The run card hash (docs/run-card.md): sha256 of the canonical JSON of the whole card
// with `run_card_hash` set to "" and without `signature` (which signs this hash: card-signature.ts).
// Computed over the card as a plain object, so fields a later format adds are sealed too.
import { canonicalJson } from "../common/canonical-json.js";
import { sha256Hex } from "../common/sha256.js";

export function runCardHash(card: object): string {
  const { signature: _signature, ...sealed } = card as { signature?: unknown };
  return sha256Hex(canonicalJson({ ...sealed, run_card_hash: "" }));
}

/** The card with its hash filled in. */
export function sealCard<T extends { run_card_hash: string }>(card: T): T {
  return { ...card, run_card_hash: runCardHash(card) };
}

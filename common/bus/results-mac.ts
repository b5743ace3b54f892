// Authenticated results on the bus: with a run token, the coordinator signs every results message
// (HMAC-SHA256 over the exact message bytes, header Udm-Mac) and a scorer given the same token
// applies only lines whose MAC verifies. Anyone who can publish on NATS could otherwise rewrite a
// run's streaming scores. The key is derived per run, so a MAC from one run does not verify on
// another, and the token itself never travels. Without a token the bus is unauthenticated.
import { createHmac, timingSafeEqual } from "node:crypto";
import { BusError } from "./bus.js";

export const RESULTS_MAC_HEADER = "Udm-Mac";
const KEY_LABEL = "udm results v1\0";

/** The run's results key: HMAC-SHA256(token, "udm results v1\0" + run id). */
export function resultsKey(token: string, runId: string): Buffer {
  return createHmac("sha256", token).update(KEY_LABEL + runId).digest();
}

/** The MAC of a message body (hex), as sent in the Udm-Mac header. */
export function resultMac(key: Buffer, body: Uint8Array | string): string {
  return createHmac("sha256", key).update(body).digest("hex");
}

/** Why a results message was refused: it carries no MAC, or one that does not verify. */
export type RejectReason = "unsigned" | "bad-mac";

export function checkResultMac(key: Buffer, body: Uint8Array, mac: string | undefined): RejectReason | undefined {
  if (mac === undefined || mac === "") return "unsigned";
  const want = createHmac("sha256", key).update(body).digest();
  const got = Buffer.from(mac, "hex");
  return got.length === want.length && timingSafeEqual(got, want) ? undefined : "bad-mac";
}

/** A results message dropped because its MAC is missing or wrong (given to the consumer's onError). */
export class ResultRejectedError extends BusError {
  constructor(
    readonly reason: RejectReason,
    message: string,
  ) {
    super(message);
  }
}

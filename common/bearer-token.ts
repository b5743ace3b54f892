// The one check of an `Authorization: Bearer <token>` value, for every port that takes a token
// (the coordinator's gRPC, its page's /api and /metrics). The scheme is case-insensitive (RFC 7235:
// `bearer` and `BEARER` are the same scheme); the token is compared in constant time over equal
// lengths, so an empty token, a prefix of the token and a longer one are all refused.
import { timingSafeEqual } from "node:crypto";

/** The token of a `Bearer <token>` header value (any case of the scheme), or undefined when it is not one. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  // Stryker disable next-line ConditionalExpression: for the type; the pattern refuses "undefined" too
  if (header === undefined) return undefined;
  // Stryker disable next-line Regex: with the s flag `.*` runs to the end anyway, so the `$` changes nothing
  const m = /^bearer +(.*)$/is.exec(header);
  return m ? m[1] : undefined;
}

/** True when `given` is exactly `expected`; the time taken does not depend on where they differ. */
export function tokenMatches(given: string | undefined, expected: Buffer): boolean {
  if (given === undefined || given === "") return false;
  const b = Buffer.from(given);
  // timingSafeEqual needs equal lengths: a token of another length is compared with itself (the
  // same work), and refused.
  const same = timingSafeEqual(b.length === expected.length ? b : expected, expected);
  return same && b.length === expected.length;
}

/** True when the header is `Bearer <expected>` (the scheme in any case). */
export function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  return tokenMatches(bearerTokenOf(header), expected);
}

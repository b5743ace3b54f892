// The one bearer-token check (common/bearer-token.ts) behind the coordinator's gRPC, its page's
// /api routes and every /metrics: the scheme in any case, the token exactly (not empty, not a
// prefix, not longer, not another of the same length).
import { describe, expect, it } from "vitest";
import { bearerMatches, bearerTokenOf, tokenMatches } from "../../common/bearer-token.js";

const SECRET = Buffer.from("s3cret");

describe("bearer token", () => {
  it("bearerTokenOf takes the scheme in any case, one or more spaces, and everything after", () => {
    expect(bearerTokenOf("Bearer s3cret")).toBe("s3cret");
    expect(bearerTokenOf("bEaReR   s3cret")).toBe("s3cret");
    expect(bearerTokenOf("Bearer a b\nc")).toBe("a b\nc");
    expect(bearerTokenOf("Bearer ")).toBe("");
    for (const notOne of [undefined, "", "Bearer", "Bearers3cret", "Basic s3cret", "s3cret", " Bearer s3cret", "xBearer s3cret"]) {
      expect(bearerTokenOf(notOne), String(notOne)).toBeUndefined();
    }
  });

  it("tokenMatches only the same token: not empty, a prefix, a longer one or another of its length", () => {
    expect(tokenMatches("s3cret", SECRET)).toBe(true);
    for (const bad of [undefined, "", "s", "s3cre", "s3crett", "s3cres", "S3CRET", "xs3cret"]) expect(tokenMatches(bad, SECRET), String(bad)).toBe(false);
    // A token longer than expected whose first bytes match (timingSafeEqual needs equal lengths).
    expect(tokenMatches("s3cret".repeat(2), SECRET)).toBe(false);
    // An empty token is refused even where the expected one is empty too: a port set up with an
    // empty token is never opened to `Bearer `.
    expect(tokenMatches("", Buffer.alloc(0))).toBe(false);
    expect(bearerMatches("Bearer ", Buffer.alloc(0))).toBe(false);
  });

  it("bearerMatches: the scheme in any case and the exact token", () => {
    for (const ok of ["Bearer s3cret", "bearer s3cret", "BEARER s3cret"]) expect(bearerMatches(ok, SECRET), ok).toBe(true);
    for (const bad of [undefined, "", "Bearer ", "Bearer", "Bearer s3cre", "Bearer s3crett", "Basic s3cret", "s3cret"]) expect(bearerMatches(bad, SECRET), String(bad)).toBe(false);
  });
});

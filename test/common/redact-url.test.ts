// redactUrl: credentials in URLs (userinfo, secret-named query parameters) become "***", in a bare
// URL or in text that quotes one; anything else comes back unchanged.
import { describe, expect, it } from "vitest";
import { redactUrl } from "../../common/redact-url.js";

describe("redactUrl", () => {
  it("replaces userinfo and secret-named query parameters", () => {
    expect(redactUrl("http://user:pass@10.0.0.1:8000")).toBe("http://***@10.0.0.1:8000");
    expect(redactUrl("https://tok@host/v1")).toBe("https://***@host/v1");
    expect(redactUrl("http://h:8000/v1?api_key=abc&model=m&access_token=t#sig=s")).toBe("http://h:8000/v1?api_key=***&model=m&access_token=***#sig=***");
    expect(redactUrl("http://h/?Password=x&X-Amz-Signature=y")).toBe("http://h/?Password=***&X-Amz-Signature=***");
  });

  it("finds URLs inside text (an error that quotes one), several at once", () => {
    expect(redactUrl("fetch failed: Request cannot be constructed from a URL that includes credentials: http://a:b@127.0.0.1:1/x")).toBe(
      "fetch failed: Request cannot be constructed from a URL that includes credentials: http://***@127.0.0.1:1/x",
    );
    expect(redactUrl("nats://u:p@a:4222,nats://b:4222")).toBe("nats://***@a:4222,nats://b:4222");
    // A JSON log line: each field's URL is redacted on its own, the fields after it are kept.
    const fields = JSON.stringify({ engine: "http://h:1/v1?api_key=abc", peer: "http://u:p@h:2", mail: "a@b" });
    expect(redactUrl(fields)).toBe(JSON.stringify({ engine: "http://h:1/v1?api_key=***", peer: "http://***@h:2", mail: "a@b" }));
    expect(redactUrl(JSON.stringify({ url: "http://h:1", who: "x@y" }))).toBe(JSON.stringify({ url: "http://h:1", who: "x@y" }));
  });

  it("leaves text without credentials unchanged", () => {
    for (const s of ["http://127.0.0.1:8000", "https://host/v1/completions?model=m&n=1", "no url here: a@b", "user@example.com"]) expect(redactUrl(s)).toBe(s);
  });
});

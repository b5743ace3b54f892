// `card verify` and the card's ed25519 signature (card/card-signature.ts): a valid one is reported
// with its key, an invalid one is also a problem, so the card does not verify.
import { generateKeyPairSync, sign } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildRunCard } from "../../card/build-card.js";
import { writeCard } from "../../card/card-file.js";
import { keyIdOf, signCard, signedText } from "../../card/card-signature.js";
import type { RunCard } from "../../card/run-card.js";
import { verifyCard } from "../../card/verify-card.js";
import { sealResults } from "../../common/results/index.js";

const root = mkdtempSync(join(tmpdir(), "udm-verify-signature-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const keyId = keyIdOf(publicKey);
let n = 0;

/** A run directory with one results file and its sealed (unsigned) card. */
function sealedRun(): { path: string; card: RunCard } {
  const dir = join(root, `run${++n}`);
  mkdirSync(join(dir, "fam"), { recursive: true });
  writeFileSync(join(dir, "fam", "t.jsonl"), '{"run_id":"t:1","id":"1","probs":{},"skipped":[]}\n');
  const card = buildRunCard({
    run: { run_id: `r${n}`, suite_identity: "d".repeat(64), tracks: ["t"], method: { method: "systemone", seeds: [], temperature: 0, model: "sim/pseudo" }, created_at: "2026-01-01T00:00:00.000Z", sessions: 1, resumes: 0 },
    metrics: undefined,
    totals: undefined,
    results: sealResults(dir),
    cluster: { agents: [], leasesExpired: 0, backupUnits: 0, resultsRejected: 0 },
    setup: { datasetId: "udm-eval-v1", datasetVersion: "r", entryCount: 1, templateVersion: null, systemPrompt: "", batchSize: null, toolsEnabled: [], methodClass: "raw-llm", gpuHourUsd: 0 },
    status: "complete",
    finished: "2026-01-01T00:01:00.000Z",
    elapsedSeconds: 60,
  });
  return { path: join(dir, "run-card.json"), card };
}

describe("card verify: the signature", () => {
  it("a signed card verifies; its signature is valid, trusted when its key is", async () => {
    const { path, card } = sealedRun();
    writeCard(path, signCard(card, privateKey));
    expect(await verifyCard(path)).toMatchObject({ problems: [], signature: { state: "valid", keyId, trusted: false } });
    expect((await verifyCard(path, { trustedKeys: new Map([[keyId, publicKey]]) })).signature).toEqual({ state: "valid", keyId, trusted: true });
  });

  it("a signature of another run_card_hash: the card does not verify, the problem names the key", async () => {
    const { path, card } = sealedRun();
    const signed = signCard(card, privateKey);
    const other = sign(null, signedText("0".repeat(64)), privateKey).toString("base64");
    writeCard(path, { ...signed, signature: { ...signed.signature, value: other } });
    const v = await verifyCard(path);
    const problem = `signature: does not match the card (signed by key ${keyId.slice(0, 16)}, but not this run_card_hash)`;
    expect(v.problems).toEqual([problem]);
    expect(v.signature).toEqual({ state: "invalid", problem });
  });

  it("a signed card edited afterwards: the signature of its recorded hash proves nothing of the edited card", async () => {
    const { path, card } = sealedRun();
    const signed = signCard(card, privateKey);
    writeCard(path, { ...signed, method: { ...signed.method, temperature: 0.5 } });
    const v = await verifyCard(path);
    expect(v.signature.state).toBe("invalid");
    expect(v.problems.filter((p) => p.startsWith("signature: "))).toEqual([`signature: does not match the card (signed by key ${keyId.slice(0, 16)}, but not this run_card_hash)`]);
    expect(v.problems.some((p) => p.startsWith(`run_card_hash: recorded ${card.run_card_hash}`))).toBe(true);
  });

  it("a signature block that is not ed25519: the card does not verify", async () => {
    const { path, card } = sealedRun();
    const signed = signCard(card, privateKey);
    writeCard(path, { ...signed, signature: { ...signed.signature, algorithm: "rsa" } } as unknown as RunCard);
    expect((await verifyCard(path)).problems).toEqual(["signature: not an ed25519 signature block (algorithm, key_id, public_key, value)"]);
  });
});

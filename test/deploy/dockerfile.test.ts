// deploy/docker/Dockerfile without a container engine: it parses and lints clean (dockerfile-ast,
// dockerfile-utils), every file it copies exists and is in the build context (.dockerignore), and
// its runtime stage, replayed in a clean temp dir (npm ci --omit=dev, the copies, the build's
// dist/), runs `udm-orch --help` through its ENTRYPOINT as a non-root user would.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DockerfileParser, ModifiableInstruction, type Instruction } from "dockerfile-ast";
import { validate, ValidationSeverity } from "dockerfile-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, requireBuild } from "../support/cli-process.js";

const DOCKERFILE = join(REPO_ROOT, "deploy", "docker", "Dockerfile");
const text = readFileSync(DOCKERFILE, "utf8");
const dockerfile = DockerfileParser.parse(text);

interface Stage {
  name: string;
  image: string;
  instructions: Instruction[];
}

function stages(): Stage[] {
  const out: Stage[] = [];
  for (const ins of dockerfile.getInstructions()) {
    if (ins.getKeyword() === "FROM") {
      const args = ins.getArguments().map((a) => a.getValue());
      out.push({ image: args[0]!, name: args[2] ?? String(out.length), instructions: [] });
    } else if (out.length > 0) out.at(-1)!.instructions.push(ins);
  }
  return out;
}

/** The words of an instruction, its flags (--from=, --mount=) apart. */
function words(ins: Instruction): { flags: Record<string, string>; args: string[] } {
  const flags: Record<string, string> = {};
  if (ins instanceof ModifiableInstruction) for (const f of ins.getFlags()) flags[f.getName()] = f.getValue() ?? "";
  return { flags, args: ins.getArguments().map((a) => a.getValue()) };
}

/** Docker's .dockerignore matching, for the plain patterns we use (no `!` exceptions). */
function ignored(path: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    const re = new RegExp(
      "^" +
        p
          .replace(/[.+^${}()|[\]\\]/g, "\\$&")
          .replace(/\*\*\//g, "\u0000")
          .replace(/\*/g, "[^/]*")
          .replace(/\?/g, "[^/]")
          .replace(/\u0000/g, "(.*/)?") +
        "(/.*)?$",
    );
    return re.test(path);
  });
}

const dockerignore = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

describe("deploy/docker/Dockerfile", () => {
  it("lints clean and is multi-stage on Node 20 slim", () => {
    const problems = validate(text).filter((d) => d.severity === ValidationSeverity.ERROR || d.severity === ValidationSeverity.WARNING);
    expect(problems.map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    const s = stages();
    expect(s.map((x) => x.name)).toEqual(["build", "runtime"]);
    const nodeImage = dockerfile.getInitialARGs().find((a) => a.getProperty()?.getName() === "NODE_IMAGE")?.getProperty()?.getValue();
    expect(nodeImage).toMatch(/^node:20(\.[\d.]+)?-[a-z]+-slim$/);
    for (const stage of s) expect(stage.image).toBe("${NODE_IMAGE}");
  });

  it("copies only files that exist and are in the build context, and every source folder of the build", () => {
    const all = stages();
    const build = all[0]!;
    const copied = new Set<string>();
    for (const stage of all) {
      for (const ins of stage.instructions.filter((i) => i.getKeyword() === "COPY")) {
        const { flags, args } = words(ins);
        if (flags.from) continue;
        for (const src of args.slice(0, -1)) {
          expect(existsSync(join(REPO_ROOT, src)), `COPY ${src}: no such file in the repository`).toBe(true);
          expect(ignored(src, dockerignore), `COPY ${src}: excluded by .dockerignore`).toBe(false);
          if (stage === build) copied.add(src);
        }
      }
    }
    const buildConfig = JSON.parse(readFileSync(join(REPO_ROOT, "tsconfig.build.json"), "utf8")) as { include: string[] };
    for (const folder of buildConfig.include) expect(copied, `tsconfig.build.json includes ${folder}`).toContain(folder);
    for (const f of ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"]) expect(copied).toContain(f);
    // What must never reach the daemon: local dependencies and builds, the git history.
    for (const p of ["node_modules", "node_modules/zod/package.json", "dist/cli/main.js", ".git"]) expect(ignored(p, dockerignore), p).toBe(true);
  });

  it("runs as a non-root user with udm-orch as its entrypoint, OCI labels and a production install", () => {
    const runtime = stages().at(-1)!;
    const users = runtime.instructions.filter((i) => i.getKeyword() === "USER").map((i) => i.getArgumentsContent());
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    const entry = runtime.instructions.find((i) => i.getKeyword() === "ENTRYPOINT")!;
    expect(JSON.parse(entry.getArgumentsContent()!)).toEqual(["udm-orch"]);
    const labels = runtime.instructions
      .filter((i) => i.getKeyword() === "LABEL")
      .flatMap((i) => i.getArguments().map((a) => a.getValue().split("=")[0]!));
    for (const l of ["title", "description", "version", "revision", "licenses"]) expect(labels).toContain(`org.opencontainers.image.${l}`);
    const runs = runtime.instructions.filter((i) => i.getKeyword() === "RUN").map((i) => words(i).args.join(" "));
    expect(runs.some((r) => /\bnpm ci\b.*--omit=dev/.test(r))).toBe(true);
  });

  describe("the runtime stage replayed in a clean directory", () => {
    let root: string;
    let env: NodeJS.ProcessEnv;
    let entrypoint: string[];

    beforeAll(() => {
      requireBuild();
      root = mkdtempSync(join(tmpdir(), "udm-image-"));
      const stageList = stages();
      const runtime = stageList.at(-1)!;
      const buildWorkdir = stageList[0]!.instructions.find((i) => i.getKeyword() === "WORKDIR")!.getArgumentsContent()!;
      let workdir = "/";
      // Image paths live under the temp dir; the build stage's work dir is this checkout (npm test built dist/).
      const inImage = (p: string) => join(root, p.startsWith("/") ? p : join(workdir, p));
      env = { HOME: root, PATH: process.env.PATH, npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? "/root", ".npm") };
      for (const ins of runtime.instructions) {
        const { flags, args } = words(ins);
        switch (ins.getKeyword()) {
          case "WORKDIR":
            workdir = args[0]!;
            break;
          case "ENV":
            for (const a of args) {
              const [k, v] = [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)];
              env[k] = k === "PATH" ? v.split(":").map((e) => (e === "$PATH" ? (process.env.PATH ?? "") : join(root, e))).join(":") : v;
            }
            break;
          case "COPY": {
            const dest = args.at(-1)!;
            for (const src of args.slice(0, -1)) {
              const from = flags.from ? join(REPO_ROOT, src.replace(new RegExp(`^${buildWorkdir}/?`), "")) : join(REPO_ROOT, src);
              const to = dest.endsWith("/") ? join(inImage(dest), src.split("/").at(-1)!) : inImage(dest);
              cpSync(from, to, { recursive: true });
            }
            break;
          }
          case "RUN": {
            const cmd = args.join(" ").replaceAll(" /app", ` ${root}/app`);
            // The cache mount is the host's npm cache here (the packages npm ci of the checkout fetched).
            const r = spawnSync("sh", ["-c", cmd], { cwd: inImage("."), env: { ...env, npm_config_prefer_offline: "true" }, encoding: "utf8", timeout: 240_000 });
            expect(r.status, `RUN ${cmd}:\n${r.stdout}${r.stderr}`).toBe(0);
            break;
          }
          case "ENTRYPOINT":
            entrypoint = JSON.parse(ins.getArgumentsContent()!) as string[];
            break;
        }
      }
    }, 300_000);

    afterAll(() => {
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it("has the production dependencies only, and `udm-orch --help` runs from the entrypoint", () => {
      const modules = readdirSync(join(root, "app", "node_modules"));
      expect(modules).toContain("commander");
      expect(modules).toContain("@grpc");
      for (const dev of ["vitest", "typescript", "kubernetes-models", "@aws-cdk"]) expect(modules).not.toContain(dev);
      const r = spawnSync(entrypoint[0]!, [...entrypoint.slice(1), "--help"], { cwd: tmpdir(), env, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Usage: udm-orch/);
      for (const c of ["coordinator", "agent", "scorer", "status", "sim-engine"]) expect(r.stdout).toContain(c);
      // The resolved binary is the image's, and it finds the .proto files it loads at run time.
      const which = spawnSync("sh", ["-c", "command -v udm-orch"], { env, encoding: "utf8" });
      expect(which.stdout.trim()).toBe(join(root, "app", "bin", "udm-orch"));
      const status = spawnSync(entrypoint[0]!, ["status", "--coordinator", "127.0.0.1:1", "--timeout-ms", "200"], { env, encoding: "utf8" });
      expect(status.stderr).not.toMatch(/proto not found|Cannot find module/);
    });
  });
});

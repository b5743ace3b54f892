// The {model} of an agent's --vllm-cmd template with real child processes: a model name that
// carries shell syntax runs nothing whatever the template's quoting, and is refused by the agent;
// a model id becomes exactly one argument of the engine command, quoted placeholder or not.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EngineProcess } from "../../agent/engine-process.js";
import { fillModelTemplate, MODEL_ENV } from "../../agent/model-template.js";
import type { Logger } from "../../common/log.js";

// Writes its arguments (after the output file) as JSON, then idles like an engine.
const ARGV_ENGINE = `
import { writeFileSync } from "node:fs";
writeFileSync(process.argv[2], JSON.stringify(process.argv.slice(3)));
setInterval(() => undefined, 1000);
`;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "udm-model-template-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "argv-engine.mjs"), ARGV_ENGINE);
  return dir;
}

function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: (m: string) => lines.push(m),
    warn: (m: string) => lines.push(m),
    error: (m: string) => lines.push(`ERROR ${m}`),
    child: () => logger,
  };
  return { logger, lines };
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

/** The placeholder unquoted, double-quoted, single-quoted and inside a longer quoted word. */
const PLACEHOLDERS = ["{model}", '"{model}"', "'{model}'", "--model='{model}'", '"--model={model}"'];

function hostileName(dir: string): string {
  return `sim/pseudo$(touch ${join(dir, "x")})\`touch ${join(dir, "y")}\``;
}

function engineCommand(dir: string, placeholder: string): string {
  return `${JSON.stringify(process.execPath)} ${JSON.stringify(join(dir, "argv-engine.mjs"))} ${JSON.stringify(join(dir, "argv.json"))} ${placeholder}`;
}

describe("--vllm-cmd {model} template", () => {
  for (const placeholder of PLACEHOLDERS) {
    it(`refuses a model name with $(...) and backticks, and runs nothing (placeholder ${placeholder})`, async () => {
      const dir = workDir();
      const { logger, lines } = capture();
      const engine = new EngineProcess(engineCommand(dir, placeholder), undefined, "http://127.0.0.1:9", logger);
      cleanups.push(() => engine.stop());
      engine.useModel(hostileName(dir));
      await new Promise((r) => setTimeout(r, 800));
      expect(existsSync(join(dir, "x"))).toBe(false);
      expect(existsSync(join(dir, "y"))).toBe(false);
      expect(existsSync(join(dir, "argv.json"))).toBe(false);
      expect(engine.starts).toBe(0);
      expect(lines.some((l) => l.startsWith("ERROR refusing the run's model") && l.includes("has characters a model id does not"))).toBe(true);
    });

    it(`passes a model id as exactly one argument (placeholder ${placeholder})`, async () => {
      const dir = workDir();
      const { logger } = capture();
      const engine = new EngineProcess(engineCommand(dir, placeholder), undefined, "http://127.0.0.1:9", logger);
      cleanups.push(() => engine.stop());
      engine.useModel("org/Model-7B_v1.5:q4@main+x");
      // The engine stand-in may still be writing the file when it appears: wait for all of it.
      const written = () => {
        try {
          return JSON.parse(readFileSync(join(dir, "argv.json"), "utf8")) as string[];
        } catch {
          return undefined;
        }
      };
      expect(await waitFor(() => written() !== undefined, 10_000)).toBe(true);
      const argv = written()!;
      expect(argv).toEqual([placeholder.startsWith("--") || placeholder.startsWith('"--') ? "--model=org/Model-7B_v1.5:q4@main+x" : "org/Model-7B_v1.5:q4@main+x"]);
    });
  }

  it("never reads the model as shell code, even one the name check would let through", () => {
    // The shell layer on its own: the filled template run by sh with a hostile value.
    const dir = workDir();
    const evil = `a b'"$(touch ${join(dir, "x")})\`touch ${join(dir, "y")}\`'"`;
    for (const placeholder of PLACEHOLDERS) {
      const out = execFileSync("sh", ["-c", `${fillModelTemplate(`printf '%s\\n' ${placeholder}`)} | wc -l; printf '%s' ${fillModelTemplate(placeholder)}`], {
        env: { ...process.env, [MODEL_ENV]: evil },
        encoding: "utf8",
      });
      const [count, ...rest] = out.split("\n");
      expect(count!.trim()).toBe("1");
      expect(rest.join("\n")).toBe(placeholder.startsWith("--") || placeholder.startsWith('"--') ? `--model=${evil}` : evil);
    }
    expect(existsSync(join(dir, "x"))).toBe(false);
    expect(existsSync(join(dir, "y"))).toBe(false);
  });

  it("keeps the template's own shell syntax", () => {
    expect(fillModelTemplate(`case {model} in *oracle) X="--oracle";; esac; exec vllm serve "$(echo {model})" $X`)).toBe(
      `case "\${${MODEL_ENV}}" in *oracle) X="--oracle";; esac; exec vllm serve "$(echo "\${${MODEL_ENV}}")" $X`,
    );
  });
});

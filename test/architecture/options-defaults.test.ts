// Options are declared once: a role's `*_DEFAULTS` object is the one place a default is written,
// and the `@default` in the doc of the option it fills must say the same value (a reader of the
// interface sees the truth; `--help` reads the object). Checked for every `*_DEFAULTS` beside an
// options interface in the source folders.
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "./source-files.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "..", "..");
const FOLDERS = ["common", "coordinator", "agent", "scorer", "sim", "card", "run", "view", "cli"];

interface DefaultsCase {
  file: string;
  name: string;
  /** key -> literal text of its value (undefined when the value is computed). */
  values: Map<string, string | undefined>;
  /** key -> the `@default` text of the option field of that name in the file's interfaces. */
  documented: Map<string, string>;
}

function literalText(e: ts.Expression): string | undefined {
  if (ts.isNumericLiteral(e)) return String(Number(e.text));
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
  if (e.kind === ts.SyntaxKind.TrueKeyword) return "true";
  if (e.kind === ts.SyntaxKind.FalseKeyword) return "false";
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(e.operand)) return String(-Number(e.operand.text));
  return undefined;
}

function defaultsCases(): DefaultsCase[] {
  const out: DefaultsCase[] = [];
  for (const folder of FOLDERS) {
    let files: string[] = [];
    try {
      files = sourceFiles(join(ROOT, folder));
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      if (!/_DEFAULTS\b/.test(text)) continue;
      const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const documented = new Map<string, string>();
      const found: Array<{ name: string; values: Map<string, string | undefined> }> = [];
      const visit = (node: ts.Node): void => {
        if (ts.isInterfaceDeclaration(node)) {
          for (const m of node.members) {
            if (!ts.isPropertySignature(m) || !m.name) continue;
            for (const tag of ts.getJSDocTags(m)) {
              if (tag.tagName.text === "default") documented.set(m.name.getText(sf), ts.getTextOfJSDocComment(tag.comment)?.trim() ?? "");
            }
          }
        }
        if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && /_DEFAULTS$/.test(node.name.text) && node.initializer) {
          let init: ts.Expression = node.initializer;
          while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init)) init = init.expression;
          if (ts.isCallExpression(init) && init.arguments[0]) init = init.arguments[0]; // Object.freeze({...})
          if (ts.isObjectLiteralExpression(init)) {
            const values = new Map<string, string | undefined>();
            for (const p of init.properties) {
              if (ts.isPropertyAssignment(p)) values.set(p.name.getText(sf), literalText(p.initializer));
              else if (ts.isShorthandPropertyAssignment(p)) values.set(p.name.text, undefined);
            }
            found.push({ name: node.name.text, values });
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
      for (const f of found) out.push({ file: relative(ROOT, file), name: f.name, values: f.values, documented });
    }
  }
  return out;
}

const cases = defaultsCases();

function normalised(doc: string): string {
  const unquoted = doc.replace(/^["'`](.*)["'`]$/, "$1");
  const n = Number(unquoted.replace(/_/g, ""));
  return unquoted !== "" && Number.isFinite(n) && /^[-\d_.e]+$/.test(unquoted) ? String(n) : unquoted;
}

describe("options declared once", () => {
  it("finds the roles' defaults objects", () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  it.each(cases.map((c) => [`${c.file} ${c.name}`, c] as const))("%s: every default is documented as its value", (_, c) => {
    for (const [key, value] of c.values) {
      const doc = c.documented.get(key);
      expect(doc, `${c.file}: option ${key} has a default in ${c.name} but no @default in its doc`).toBeDefined();
      if (value !== undefined) expect(normalised(doc!), `${c.file}: @default of ${key} says ${doc}, ${c.name} has ${value}`).toBe(value);
    }
  });
});

// The prompt label-read sends to a generation model, versioned: a run card records the version
// and the sha256 of the template text (docs/run-card.md method.system_prompt_sha256), so results from
// different templates are never mixed up. Change the text => bump the version.
//
// Layout: system text, the record's state (its JSON text, as vLLM's structured decisions render
// a JSON state), then one question with a line "<label>: <option>" per option and "Answer:". The
// state part is the same for every question of a record, so the engine's prefix cache computes it
// once per record.
import { createHash } from "node:crypto";
import type { Question } from "../../common/suite/index.js";

export const LABEL_READ_TEMPLATE_VERSION = "label-read/v1";

export const LABEL_READ_SYSTEM =
  "You are a careful annotator. Read the record below, then answer the question about it with the label of exactly one option.";

const CHOICE_REPLY = "Answer with the label of one option only.";
const NOUL_REPLY = "Answer with yes or no only.";

/** The whole template as text, hashed for the run card. */
export const LABEL_READ_TEMPLATE_TEXT = [
  LABEL_READ_TEMPLATE_VERSION,
  LABEL_READ_SYSTEM,
  "{state JSON}",
  "Question: {instructions}",
  "{label}: {option key} - {option description}",
  CHOICE_REPLY,
  NOUL_REPLY,
  "Answer:",
].join("\n");

export const LABEL_READ_TEMPLATE_SHA256 = createHash("sha256").update(LABEL_READ_TEMPLATE_TEXT).digest("hex");

/** Labels of n options: A..Z, then AA, AB, ... (spreadsheet columns). */
export function choiceLabels(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let k = i;
    let label = "";
    do {
      label = String.fromCharCode(65 + (k % 26)) + label;
      k = Math.floor(k / 26) - 1;
    } while (k >= 0);
    out.push(label);
  }
  return out;
}

/** The shared part of every question of a record. Ends with a blank line. */
export function statePrefix(state: Record<string, string>): string {
  return `${LABEL_READ_SYSTEM}\n\n${JSON.stringify(state)}\n\n`;
}

export interface ListedOption {
  label: string;
  /** Option key (noul: "true" / "false"). */
  key: string;
  text: string;
}

/**
 * The options of a question with their labels, in the order listed. `positions[i]` is the label
 * position of option i (a label permutation); noul lists yes/no and permutes only their order.
 */
export function listOptions(question: Question, positions: readonly number[]): ListedOption[] {
  if (question.type === "noul") {
    const sides: ListedOption[] = [
      { label: "yes", key: "true", text: question.criteria.true || "it holds" },
      { label: "no", key: "false", text: question.criteria.false || "it does not hold" },
    ];
    return positions[0] === 1 ? [sides[1]!, sides[0]!] : sides;
  }
  const keys = Object.keys(question.criteria);
  const labels = choiceLabels(keys.length);
  const listed: ListedOption[] = keys.map((key, i) => {
    const desc = question.criteria[key];
    return { label: labels[positions[i] ?? i]!, key, text: desc ? `${key} - ${desc}` : key };
  });
  return listed.sort((a, b) => labels.indexOf(a.label) - labels.indexOf(b.label));
}

/** The question part, after the state prefix. */
export function questionText(question: Question, options: readonly ListedOption[]): string {
  const lines = question.instructions ? [`Question: ${question.instructions}`] : ["Question:"];
  for (const o of options) lines.push(`${o.label}: ${o.text.replace(/\n/g, " ")}`);
  lines.push(question.type === "noul" ? NOUL_REPLY : CHOICE_REPLY);
  lines.push("Answer:");
  return lines.join("\n");
}

// One-row groups with one or more choice/noul questions about a text state: sentiment, nli,
// fact checking, intent, multiple choice, education, quality scoring, moderation and safety.
import type { QuestionShape } from "../track-shapes.js";
import { originOf, type BuildContext, type GroupBuilder } from "../build-context.js";
import { assembleRecord, letterCode, optionRange, type SyntheticQuestion } from "../record.js";
import { FINEWEB_BALANCE, FINEWEB_LABELS, VIHSD_LABELS, VISAFE_CATEGORIES } from "../track-profiles.js";

export const buildClassificationGroup: GroupBuilder = (ctx, _group, rows) => {
  const out = [];
  for (let r = 0; r < rows; r++) out.push(buildRecord(ctx));
  return out;
};

function buildRecord(ctx: BuildContext) {
  const { shape, profile } = ctx;
  const state: Record<string, string> = {};
  for (const key of shape.state_keys) state[key] = stateText(ctx, key);

  const questions: Record<string, SyntheticQuestion> = {};
  const expected: Record<string, string | boolean> = {};
  let stratum: string | undefined;
  for (const q of shape.questions) {
    const instructions = profile.instructions?.[q.key] ?? `Answer the question "${q.key}" about the input.`;
    if (q.type === "noul") {
      const gold = goldNoul(ctx, q, expected);
      questions[q.key] = { type: "noul", instructions, criteria: {} };
      expected[q.key] = gold;
      stratum ??= String(gold);
      continue;
    }
    const criteria = choiceCriteria(ctx, q);
    const gold = goldChoice(ctx, q, criteria, expected);
    questions[q.key] = { type: "choice", instructions, criteria };
    expected[q.key] = gold;
    stratum ??= criteria[gold] ?? gold;
  }
  const id = ctx.newId();
  const ordinal = shape.questions.some((q) => q.ordinal);
  return assembleRecord(shape, {
    id,
    groupId: id,
    source: profile.source,
    origin: originOf(ctx),
    stratum: stratum ?? "all",
    state,
    questions,
    expected,
    ...(profile.extra ? { extra: profile.extra } : {}),
    ...(ordinal ? { scoring: { ordinal: true } } : {}),
  });
}

function stateText(ctx: BuildContext, key: string): string {
  const { text, shape } = ctx;
  switch (key) {
    case "text":
      if (shape.family === "quality_scoring") return text.passage(80, 250);
      if (shape.family === "intent") return text.sentence(4, 14, "");
      if (shape.family === "sentiment") return text.sentence(5, 25);
      return text.passage(6, 45);
    case "question":
      if (shape.track === "vimmrc-vi") return `${text.passage(100, 180)}\n\n${text.question(8, 20)}`;
      return text.question(12, 40);
    case "student_submission":
      return text.passage(30, 120);
    case "claim":
      return text.sentence(10, 25);
    case "evidence_text":
      return text.passage(50, 150);
    case "premise":
      return text.passage(15, 40);
    case "hypothesis":
      return text.sentence(6, 15);
    case "prompt":
      return text.passage(10, 80);
    case "response":
      return text.passage(20, 120);
    default:
      return text.passage(10, 60);
  }
}

function choiceCriteria(ctx: BuildContext, q: QuestionShape): Record<string, string> {
  const { shape, profile, rng, text } = ctx;
  const criteria: Record<string, string> = {};
  if (Array.isArray(q.options)) {
    const named: Readonly<Record<string, string>> = shape.track === "vihsd" ? VIHSD_LABELS : shape.track === "fineweb-c-vi" ? FINEWEB_LABELS : {};
    for (const key of q.options as readonly string[]) criteria[key] = named[key] ?? key;
    return criteria;
  }
  if (shape.track === "visafe" && q.key === "category") {
    for (const c of VISAFE_CATEGORIES) criteria[c] = c.replace(/_/g, " ");
    return criteria;
  }
  const range = optionRange(q.options);
  if (!range) throw new Error(`${shape.track}: cannot read option count ${JSON.stringify(q.options)}`);
  const labels = profile.labels;
  const count = rng.int(range[0], range[1]);
  if (labels && labels.length !== count) throw new Error(`${shape.track}: ${labels.length} labels for ${count} options`);
  for (let i = 0; i < count; i++) criteria[letterCode(i)] = labels?.[i] ?? text.phrase(1, 6);
  return criteria;
}

function goldNoul(ctx: BuildContext, q: QuestionShape, _sofar: Record<string, string | boolean>): boolean {
  return ctx.rng.chance(q.p_true ?? 0.5);
}

function goldChoice(ctx: BuildContext, q: QuestionShape, criteria: Record<string, string>, sofar: Record<string, string | boolean>): string {
  const { rng, shape } = ctx;
  const keys = Object.keys(criteria);
  // Follow-up questions of a safety prompt agree with its `harmful` gold.
  if (shape.track === "visafe" && q.key === "category") return sofar.harmful ? rng.pick(keys.slice(1)) : (keys[0] as string);
  if (shape.track === "deepedu" && q.key === "attack_type") return sofar.harmful ? rng.pick(keys.slice(1)) : (keys[0] as string);
  const balance = q.gold_balance ?? (shape.track === "fineweb-c-vi" ? FINEWEB_BALANCE : undefined);
  if (balance && balance.length === keys.length) return keys[rng.weighted(balance)] as string;
  return rng.pick(keys);
}

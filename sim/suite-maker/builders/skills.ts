// skill_routing: pick the skill (`skill:<name>`) that should handle a request. A group is one
// conversation; its later rows are follow-up requests.
import { originOf, type GroupBuilder } from "../build-context.js";
import { assembleRecord, optionRange, type SyntheticRecord } from "../record.js";

const AREAS = ["monitoring", "database", "frontend", "backend", "security", "data", "cloud", "mobile", "testing", "documentation", "billing", "search", "email", "calendar", "design", "analytics", "devops", "networking", "ml", "support"];
const ASPECTS = ["observability", "migration", "optimization", "debugging", "deployment", "review", "automation", "reporting", "integration", "setup", "troubleshooting", "refactoring", "scaling", "auditing"];

export const buildSkillGroup: GroupBuilder = (ctx, _group, rows) => {
  const { shape, profile, rng, english } = ctx;
  const range = optionRange(shape.questions[0]?.options) ?? [10, 40];
  const count = rng.int(range[0], range[1]);
  const ids = new Set<string>();
  while (ids.size < count) ids.add(`skill:${rng.pick(AREAS)}-${rng.pick(ASPECTS)}`);
  const criteria: Record<string, string> = {};
  for (const id of ids) criteria[id] = english.sentence(6, 18);
  const skills = Object.keys(criteria);
  const conversationId = ctx.newId();
  const records: SyntheticRecord[] = [];
  let history = "";
  for (let r = 0; r < rows; r++) {
    const request = english.passage(8, 60);
    const query = history ? `${history}\n\nFollow-up: ${request}` : request;
    const gold = rng.pick(skills);
    records.push(
      assembleRecord(shape, {
        id: rows === 1 ? conversationId : `${conversationId}:turn${r}`,
        groupId: conversationId,
        source: profile.source,
        origin: originOf(ctx),
        stratum: gold.slice("skill:".length).split("-")[0] ?? "all",
        state: { query },
        questions: { skill: { type: "choice", instructions: "Which skill should handle the user's request?", criteria } },
        expected: { skill: gold },
        extra: { skill_count: skills.length },
      }),
    );
    history = query;
  }
  return records;
};

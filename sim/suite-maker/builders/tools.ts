// tool_selection: one conversation per group; each row asks for the next tool call at one step.
// tools and messages are stringified JSON lists, as in the card.
import { originOf, type BuildContext, type GroupBuilder } from "../build-context.js";
import { assembleRecord, optionRange, type SyntheticRecord } from "../record.js";

const VERBS = ["get", "list", "search", "create", "update", "delete", "find", "send", "fetch", "convert", "calculate", "check", "schedule", "book", "translate", "summarize", "analyze", "generate", "validate", "lookup"];
const NOUNS = ["weather", "flights", "hotel", "invoice", "customer", "order", "ticket", "calendar_event", "email", "file", "repository", "branch", "stock_price", "exchange_rate", "recipe", "longest_word", "news", "user_profile", "shipment", "playlist", "document", "table_rows", "route", "reminder", "contact", "payment", "product", "review", "timezone", "image"];
const PARAM_TYPES = ["string", "integer", "number", "boolean"];

export const NONE_OPTION = "none";

interface Tool {
  name: string;
  description: string;
  params: string[];
}

export const buildToolGroup: GroupBuilder = (ctx, _group, steps) => {
  const { shape, profile, rng, english } = ctx;
  const range = optionRange(shape.questions[0]?.options) ?? [3, 15];
  const toolCount = rng.int(range[0], range[1]);
  const names = new Set<string>();
  while (names.size < toolCount) names.add(`${rng.pick(VERBS)}_${rng.pick(NOUNS)}`);
  const tools: Tool[] = [...names].map((name) => ({
    name,
    description: english.sentence(6, 16),
    params: Array.from({ length: rng.int(1, 3) }, () => rng.pick(NOUNS)).filter((p, i, a) => a.indexOf(p) === i),
  }));
  const toolsJson = JSON.stringify(
    tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        description: t.description,
        parameters: {
          type: "object",
          properties: Object.fromEntries(t.params.map((p) => [p, { type: rng.pick(PARAM_TYPES), description: english.phrase(2, 6) }])),
          required: t.params.slice(0, 1),
        },
      },
    })),
  );
  const criteria: Record<string, string> = {};
  for (const t of tools) criteria[t.name] = t.description;
  criteria[NONE_OPTION] = "No tool call: answer the user directly.";

  const conversationId = ctx.newId();
  const messages: unknown[] = [
    { role: "system", content: english.passage(20, 60) },
    { role: "user", content: english.passage(10, 50) },
  ];
  const records: SyntheticRecord[] = [];
  for (let step = 0; step < steps; step++) {
    const last = step === steps - 1;
    const next = last && rng.chance(steps > 1 ? 0.4 : 0.2) ? undefined : rng.pick(tools);
    records.push(
      assembleRecord(shape, {
        id: `${conversationId}:step${step}`,
        groupId: conversationId,
        source: profile.source,
        origin: originOf(ctx),
        stratum: next ? "tool_call" : "final_answer",
        state: { tools: toolsJson, messages: JSON.stringify(messages) },
        questions: {
          next_tool: { type: "choice", instructions: "Which tool should the assistant call next? Choose none if it should answer without a tool call.", criteria },
        },
        expected: { next_tool: next ? next.name : NONE_OPTION },
        extra: { conversation_id: conversationId, step, tool_count: tools.length },
      }),
    );
    if (next) appendCall(ctx, messages, next, step);
  }
  return records;
};

function appendCall(ctx: BuildContext, messages: unknown[], tool: Tool, step: number): void {
  const { english, rng } = ctx;
  const callId = `call_${step}_${rng.hex8()}`;
  const args = Object.fromEntries(tool.params.map((p) => [p, english.phrase(1, 3)]));
  messages.push({
    role: "assistant",
    content: rng.chance(0.5) ? english.sentence(5, 15) : "",
    tool_calls: [{ id: callId, type: "function", function: { name: tool.name, arguments: JSON.stringify(args) } }],
  });
  messages.push({ role: "tool", tool_call_id: callId, content: JSON.stringify({ status: "ok", result: english.passage(10, 60) }) });
  if (rng.chance(0.3)) messages.push({ role: "user", content: english.sentence(6, 20) });
}

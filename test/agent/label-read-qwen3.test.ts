// label-read against the sim with the real qwen3 tokenizer and chat template (real-tokenizer-oracle.ts).
import { describe } from "vitest";
import { realTokenizerOracleTests } from "./real-tokenizer-oracle.js";

describe("label-read, sim --tokenizer qwen3, oracle", () => realTokenizerOracleTests("qwen3"));

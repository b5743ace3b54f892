// label-read against the sim with the real llama3.1 tokenizer and chat template (real-tokenizer-oracle.ts).
import { describe } from "vitest";
import { realTokenizerOracleTests } from "./real-tokenizer-oracle.js";

describe("label-read, sim --tokenizer llama3.1, oracle", () => realTokenizerOracleTests("llama3.1"));

// The methods matrix (methods-matrix.ts) with the real qwen3 tokenizer and its chat template.
import { describeMethodsMatrix } from "./methods-matrix.js";

describeMethodsMatrix("qwen3");

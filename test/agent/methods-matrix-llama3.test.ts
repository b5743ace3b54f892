// The methods matrix (methods-matrix.ts) with the real llama3.1 tokenizer and its chat template.
import { describeMethodsMatrix } from "./methods-matrix.js";

describeMethodsMatrix("llama3.1");

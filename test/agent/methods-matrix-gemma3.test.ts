// The methods matrix (methods-matrix.ts) with the real gemma3 tokenizer and its chat template.
import { describeMethodsMatrix } from "./methods-matrix.js";

describeMethodsMatrix("gemma3");

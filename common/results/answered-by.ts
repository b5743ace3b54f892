// A results line's `answered_by` (question key -> engine method) as a list of pairs, in the order
// JSON.stringify writes the object the pairs stand for. A reranking record names a method for each of
// its ~25 document questions: as an object, each of those keys went into a dictionary-mode object
// of its own (keys no other record has) that the line writer then stringified, 8 of the 20 µs the
// coordinator's thread spent decoding, checking and writing such a result (a micro-benchmark of
// decode + validate + write, 24 questions). The pairs are written as they are (line-writer.ts).

/** Question key -> method, as pairs in JSON order: keys unique, array-index keys first, ascending. */
export class AnsweredByList {
  private constructor(
    readonly keys: readonly string[],
    readonly methods: readonly string[],
  ) {}

  // Stryker disable next-line ArrayDeclaration: a static field, whose mutant Stryker's vitest runner activates only after the module has loaded (stryker-js#6144); the empty list's tests fail when it is applied by hand
  static readonly EMPTY = new AnsweredByList([], []);

  /**
   * Pairs as they arrived (a protobuf map's entries: a later entry for a key wins), in the order of
   * the object they make: the arrays themselves where no key repeats and none is an array index.
   * `distinct`: the caller knows no key repeats (the decoder matched each to a different question).
   */
  static of(keys: string[], methods: string[], distinct = false): AnsweredByList {
    if (keys.length === 0) return AnsweredByList.EMPTY;
    // Stryker disable next-line ConditionalExpression: a fast path: the object's way gives the same list
    if (!(distinct ? hasIndex(keys) : hasRepeatOrIndex(keys))) return new AnsweredByList(keys, methods);
    const record: Record<string, string> = {};
    for (let i = 0; i < keys.length; i++) setOwn(record, keys[i]!, methods[i]!);
    return AnsweredByList.fromRecord(record);
  }

  static fromRecord(record: Readonly<Record<string, string>>): AnsweredByList {
    const keys = Object.keys(record);
    return keys.length === 0 ? AnsweredByList.EMPTY : new AnsweredByList(keys, keys.map((k) => record[k]!));
  }

  toRecord(): Record<string, string> {
    const record: Record<string, string> = {};
    for (let i = 0; i < this.keys.length; i++) setOwn(record, this.keys[i]!, this.methods[i]!);
    return record;
  }
}

/** `answered_by` as the results line's writers take it: an object, or the pairs. */
export type AnsweredBy = Readonly<Record<string, string>> | AnsweredByList;

export function answeredByRecord(answeredBy: AnsweredBy): Record<string, string> {
  return answeredBy instanceof AnsweredByList ? answeredBy.toRecord() : { ...answeredBy };
}

function setOwn(record: Record<string, string>, key: string, value: string): void {
  // "__proto__" as a plain assignment would replace the prototype instead of adding a key.
  // Stryker disable next-line ConditionalExpression,BooleanLiteral: defining any key makes the same own key; writable and configurable matter to no later step
  if (key === "__proto__") Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

/**
 * Where a plain scan cannot keep the arrival order: a key twice, or a key an object orders first.
 * A fast path's test: "true" where it need not be takes the object's way, which gives the same list.
 */
// Stryker disable all: as above (saying "false" for a repeat or an index is killed when applied by hand)
function hasRepeatOrIndex(keys: readonly string[]): boolean {
  if (hasIndex(keys)) return true;
  if (keys.length <= 16) {
    for (let i = 1; i < keys.length; i++) for (let j = 0; j < i; j++) if (keys[i] === keys[j]) return true;
    return false;
  }
  return new Set(keys).size !== keys.length;
}

function hasIndex(keys: readonly string[]): boolean {
  for (let i = 0; i < keys.length; i++) if (isArrayIndex(keys[i]!)) return true;
  return false;
}
// Stryker restore all

/** A key an object orders before the others (JSON.stringify and Object.keys alike): "0" up to 2^32 - 2. */
export function isArrayIndex(key: string): boolean {
  const c = key.charCodeAt(0);
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a fast path that lets more keys through to the regex, which decides the same (a 9 first is killed)
  if (!(c >= 48 && c <= 57)) return false;
  return /^(?:0|[1-9][0-9]*)$/.test(key) && Number(key) < 4294967295;
}

// Which document a reranking record's question asks about when its field_to_document does not say
// (docs/suite-format.md "retrieval_ranking"): the scorer ranks by it, and the gold feed leaves out a
// field_to_document that says only this.

/** The document of question `key` when the record names none: the key less a leading "doc:". */
export function derivedDocument(key: string): string {
  return key.startsWith("doc:") ? key.slice(4) : key;
}

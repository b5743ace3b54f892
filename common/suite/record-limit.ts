// `--limit N` (docs/suite-format.md "Limiting records"): a smoke test over the first records of each
// track, cut at whole groups (metadata.group_id) so the group bootstrap and reranking queries stay
// whole. The same records every time: groups in the order of their first record in the file, taken
// while the total stays within N; the first group is always taken, however large.

/** The records of a track (in file order) that `limit` keeps; all of them when limit is undefined. */
export function limitRecords<T>(records: readonly T[], groupOf: (record: T) => string, limit: number | undefined): T[] {
  if (limit === undefined) return [...records];
  const sizes = new Map<string, number>();
  for (const r of records) sizes.set(groupOf(r), (sizes.get(groupOf(r)) ?? 0) + 1);
  const kept = new Set<string>();
  let total = 0;
  for (const [group, size] of sizes) {
    if (kept.size > 0 && total + size > limit) break;
    kept.add(group);
    total += size;
  }
  return records.filter((r) => kept.has(groupOf(r)));
}

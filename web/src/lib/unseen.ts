/**
 * A Retrospective study fills values its model never saw in training (a new category, NA in a column trained
 * without gaps) with the training median or most frequent category; report.json lists them as `unseen_values`.
 * These are the sentences the results page shows, so a reader knows which metrics rest on filled values.
 */
export interface UnseenValues {
  column: string;
  rows: number;
  examples: string[];
  filled_with: string;
  value?: number;
}

export function unseenValueNotes(report: Record<string, unknown> | null | undefined, totalRows?: number): string[] {
  const list = report?.unseen_values;
  if (!Array.isArray(list)) return [];
  const of = typeof totalRows === "number" ? ` of ${totalRows}` : "";
  return (list as UnseenValues[]).map((u) => {
    const examples = u.examples.map((e) => `'${e}'`).join(", ");
    const fill = typeof u.value === "number" ? `${u.filled_with} (${u.value})` : u.filled_with;
    const rows = of || u.rows !== 1 ? "rows" : "row";
    return `${u.column}: ${u.rows}${of} ${rows} held values the model never saw in training (${examples}); these were scored with the ${fill}.`;
  });
}

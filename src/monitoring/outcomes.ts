import { ApiError, type ErrorDetail, msg, detail } from "../errors.js";

/**
 * POST /v1/models/{experiment_id}/outcomes (issue 49 item 3): true outcomes joined to earlier predictions by their
 * request id. The label is written as in the training CSV's label column (the class's code; its index or name is
 * accepted too). The whole list is checked first: any bad row refuses the call with every bad row named and
 * nothing written. Request ids with no prediction record (never made, another model's, or purged after
 * PREDICTION_RETENTION_DAYS) are not an error: they come back as `unmatched`, the rest are written. Posting the
 * same outcome again changes nothing (idempotent per request id); a different label replaces the earlier one.
 */

export const MAX_OUTCOMES = 10_000;

export interface OutcomeIn {
  request_id: string;
  label: string | number | boolean;
}

type Classes = Array<{ index: number; code: string; name: string }>;

export function classIndexOf(classes: Classes, label: OutcomeIn["label"]): number | undefined {
  const text = String(label);
  const byCode = classes.find((c) => c.code === text);
  if (byCode) return byCode.index;
  const byName = classes.find((c) => c.name === text);
  if (byName) return byName.index;
  if (typeof label === "number" && Number.isInteger(label)) return classes.find((c) => c.index === label)?.index;
  return undefined;
}

/** Every row's class index, or an ApiError naming each bad row. */
export function checkOutcomes(problem: string, classes: Classes, rows: OutcomeIn[]): Array<{ requestId: string; label: number }> {
  if (problem !== "binary" && problem !== "multiclass")
    throw new ApiError(409, "outcomes_not_supported", msg("monitoring.outcomes_not_supported", { problem }));
  const details: ErrorDetail[] = [];
  const out: Array<{ requestId: string; label: number }> = [];
  const seen = new Map<string, number>();
  rows.forEach((r, i) => {
    const label = classIndexOf(classes, r.label);
    if (label === undefined) {
      details.push(
        detail(
          `${i}.label`,
          msg("monitoring.not_a_label", { row: i, label: JSON.stringify(r.label), labels: classes.map((c) => c.code).join(", ") }),
        ),
      );
      return;
    }
    const earlier = seen.get(r.request_id);
    if (earlier !== undefined && out[earlier].label !== label) {
      details.push(detail(`${i}.request_id`, msg("monitoring.request_twice", { row: i, earlier })));
      return;
    }
    if (earlier === undefined) seen.set(r.request_id, out.push({ requestId: r.request_id, label }) - 1);
  });
  if (details.length) throw new ApiError(400, "invalid_request", msg("monitoring.bad_rows", { count: details.length }), details);
  return out;
}

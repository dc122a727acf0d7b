import i18n from "i18next";
import type { ColumnInfo } from "../api/types";
import { formatCount } from "../lib/format";

function describe(c: ColumnInfo): string {
  const ex = c.examples.slice(0, 3).join(", ");
  const t = i18n.getFixedT(null, "dataset");
  return `${t(`columns.type.${c.type}`, { defaultValue: c.type })}${ex ? `; ${t("columns.example", { ex })}` : ""}${c.missing ? `; ${t("columns.missing", { n: formatCount(c.missing) })}` : ""}`;
}

/** One column (or none, when optional) from the CSV's columns. */
export function ColumnSelect(props: {
  label: string;
  columns: ColumnInfo[];
  value: string | null;
  onChange: (v: string | null) => void;
  optional?: string;
  help?: string;
  id: string;
}) {
  return (
    <label htmlFor={props.id}>
      {props.label}
      <select
        id={props.id}
        value={props.value ?? ""}
        onChange={(e) => props.onChange(e.target.value || null)}
        aria-describedby={props.help ? `${props.id}-help` : undefined}
      >
        {props.optional !== undefined ? <option value="">{props.optional}</option> : null}
        {props.columns.map((c) => (
          <option key={c.name} value={c.name}>
            {c.name} ({describe(c)})
          </option>
        ))}
      </select>
      {props.help ? (
        <span id={`${props.id}-help`} className="muted small">
          {props.help}
        </span>
      ) : null}
    </label>
  );
}

/** Several columns, as a group of checkboxes in the CSV's order. */
export function ColumnChecklist(props: {
  legend: string;
  columns: ColumnInfo[];
  value: string[];
  onChange: (v: string[]) => void;
  testId?: string;
}) {
  const chosen = new Set(props.value);
  return (
    <fieldset className="checklist" data-testid={props.testId}>
      <legend>{props.legend}</legend>
      {props.columns.length === 0 ? <p className="muted small">{i18n.t("dataset:columns.none")}</p> : null}
      {props.columns.map((c) => (
        <label key={c.name} className="check">
          <input
            type="checkbox"
            checked={chosen.has(c.name)}
            onChange={(e) => {
              const next = e.target.checked ? [...props.value, c.name] : props.value.filter((x) => x !== c.name);
              // Keep the CSV's order, whatever order the boxes were ticked in.
              props.onChange(props.columns.map((x) => x.name).filter((n) => next.includes(n)));
            }}
          />
          <span>
            {c.name} <span className="muted small">({describe(c)})</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}

"""Subgroup performance on the test patients: the manifest's ``clinical.subgroups`` (docs/metrics.md, "Subgroups").

For each column the request names in ``subgroup_cols`` (job spec ``data.subgroup_cols``) the test rows are grouped:

- continuous (every present value a number, more than CONTINUOUS_DISTINCT distinct values): in quartiles of the test
  patients' values, labelled with the smallest and largest value in each ("21–24"); or at the cut points the request
  gives (``subgroup_bins``: a value equal to a cut point goes to the upper group), labelled "<30", "30–<50", "≥50";
- categorical (anything else): one group per value held by at least MIN_PATIENTS test patients, at most MAX_GROUPS
  groups; rarer values are pooled as "other". A column with more than FREE_TEXT_DISTINCT distinct values looks like
  free text or an identifier: it is skipped, with the reason, and no value of it is printed;
- an empty entry makes a "missing" group, and so does a missing-value marker (NA, ?, ...) in a numeric column (in a
  category column a marker is a value like any other, as for the features: "none" may be a real answer).

Per group: distinct patients, patients with the positive class (binary), prevalence, AUC (binary; multiclass: the
macro one-vs-rest AUC), and sensitivity and specificity at the model's thresholds (multiclass: macro over classes),
each with a patient-bootstrap 95% interval (metrics._bootstrap, the same resampling as the test metrics). A group
with fewer than MIN_PATIENTS patients, or fewer than MIN_PER_CLASS patients of some class, is ``too_small``: counts
only, no figures. A group whose AUC interval lies wholly below the AUC of the rest of the test set (every other test
patient, point estimate) is flagged ``worse``.
"""

from __future__ import annotations

import math

import numpy as np

from . import metrics as M
from .data import Table, require_columns
from .spec import JobSpec

MIN_PATIENTS = 20
MIN_PER_CLASS = 5
MAX_GROUPS = 12
CONTINUOUS_DISTINCT = 10
FREE_TEXT_DISTINCT = 30
OTHER = "other"
MISSING = "missing"
# Kept in step with MISSING_MARKERS in tabular/table.py and src/datasets/csv.ts.
MISSING_MARKERS = frozenset({"na", "n/a", "nan", "?", "null", "none", "missing", ".", "-"})


def inputs(spec: JobSpec | dict, table: Table, rows: list[int]) -> dict | None:
    """The subgroup columns' values on ``rows`` (aligned with the scores), or None when the request names none."""
    if isinstance(spec, JobSpec):
        names, bins = list(spec.data.subgroup_cols), spec.data.subgroup_bins
    else:  # a bare {"data": {...}}, as the unit tests write it
        names, bins = list(spec["data"].get("subgroup_cols") or []), spec["data"].get("subgroup_bins") or {}
    if not names:
        return None
    require_columns(table, names)
    return {
        "columns": [(n, [table.rows[r][n] for r in rows]) for n in names],
        "bins": {k: list(v) for k, v in bins.items()},
        # Over every row, as the dataset check counts them, so its free-text warning and this skip agree.
        "distinct": {n: len({row[n].strip() for row in table.rows} - {""}) for n in names},
    }


def _is_missing(v: str) -> bool:
    return v.strip() == "" or v.strip().lower() in MISSING_MARKERS


def _as_float(v: str) -> float | None:
    try:
        x = float(v.strip())
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def assign(values: list[str], groups, bins: list[float] | None = None, distinct_all: int | None = None) -> dict:
    """{kind, labels (per row, None = no group), order, skipped?}: which group each row is in. ``distinct_all``: the
    column's distinct values over the whole table (the free-text rule); unset, those of ``values``."""
    present = [v for v in values if not _is_missing(v)]
    numbers = [_as_float(v) for v in present]
    numeric = bool(present) and all(x is not None for x in numbers)
    labels: list[str | None] = [MISSING if _is_missing(v) else None for v in values]
    if numeric and (bins or len(set(numbers)) > CONTINUOUS_DISTINCT):
        x = np.array([_as_float(v) if not _is_missing(v) else np.nan for v in values], dtype=float)
        ok = np.isfinite(x)
        if bins:
            cuts = sorted(set(float(b) for b in bins))
            names = [f"<{_fmt(cuts[0])}"]
            names += [f"{_fmt(a)}–<{_fmt(b)}" for a, b in zip(cuts[:-1], cuts[1:])]
            names.append(f"≥{_fmt(cuts[-1])}")
            idx = np.searchsorted(cuts, x, side="right")
            for i in np.nonzero(ok)[0]:
                labels[i] = names[idx[i]]
            order = [n for n in names if n in labels]
            kind = "bins"
        else:
            # Quartile edges of the test patients' values (one value per patient: its first row's).
            first: dict[str, float] = {}
            for g, v in zip(np.asarray(groups).astype(str)[ok], x[ok]):
                first.setdefault(g, v)
            edges = np.unique(np.percentile(np.array(list(first.values())), [25, 50, 75]))
            idx = np.searchsorted(edges, x, side="left")  # a value equal to an edge goes to the lower quartile
            order = []
            for q in range(len(edges) + 1):
                members = ok & (idx == q)
                if not members.any():
                    continue
                name = f"{_fmt(x[members].min())}–{_fmt(x[members].max())}"
                for i in np.nonzero(members)[0]:
                    labels[i] = name
                order.append(name)
            kind = "quartiles"
        if MISSING in labels:
            order.append(MISSING)
        return {"kind": kind, "labels": labels, "order": order}
    # A category column keeps its markers as values ("none" may be a real answer, as for the features); only an empty
    # entry is missing there.
    labels = [MISSING if v.strip() == "" else None for v in values]
    present = [v for v in values if v.strip() != ""]
    distinct = sorted(set(v.strip() for v in present))
    many = distinct_all if distinct_all is not None else len(distinct)
    if many > FREE_TEXT_DISTINCT:
        return {
            "kind": "categorical",
            "labels": [None] * len(values),
            "order": [],
            "skipped": f"{many} distinct values: this looks like free text or an identifier, not a grouping "
            f"(at most {FREE_TEXT_DISTINCT}); no value of it is shown",
        }
    g = np.asarray(groups).astype(str)
    patients = {d: len(set(g[[i for i, v in enumerate(values) if v.strip() == d]])) for d in distinct}
    kept = sorted((d for d in distinct if patients[d] >= MIN_PATIENTS), key=lambda d: (-patients[d], d))
    limit = MAX_GROUPS - (1 if MISSING in labels else 0)
    if len(kept) < len(distinct) or len(kept) > limit:
        limit -= 1  # room for the "other" group
    kept = kept[:limit]
    kept_set = set(kept)
    for i, v in enumerate(values):
        if labels[i] is None:
            labels[i] = v.strip() if v.strip() in kept_set else OTHER
    order = sorted(kept)
    if OTHER in labels:
        order.append(OTHER)
    if MISSING in labels:
        order.append(MISSING)
    return {"kind": "categorical", "labels": labels, "order": order}


def _point(problem: str, y, s, p, positive: int) -> tuple[dict, dict]:
    auc_c = M._per_class_auc(y, s)
    rates = M._per_class_rates(y, p)
    if problem == "binary":
        point = {
            "auc": float(auc_c[1]),  # one ROC curve for two classes, as the test metrics
            "sensitivity": float(rates["sensitivity"][positive]),
            "specificity": float(rates["specificity"][positive]),
        }
    else:
        mean = lambda v: float(np.nanmean(v)) if np.isfinite(v).any() else np.nan  # noqa: E731
        point = {
            "auc": mean(auc_c),
            "sensitivity": mean(rates["sensitivity"]),
            "specificity": mean(rates["specificity"]),
        }
    return point, {}


def _auc_of(problem: str, y, s) -> float:
    if len(y) == 0:
        return np.nan
    a = M._per_class_auc(y, s)
    if problem == "binary":
        return float(a[1])
    return float(np.nanmean(a)) if np.isfinite(a).any() else np.nan


def compute(
    problem: str,
    y_onehot,
    scores,
    decisions,
    groups,
    positive: int | None,
    sub: dict,
    seed: int = 0,
    n_boot: int = M.N_BOOT,
) -> list[dict]:
    """The ``clinical.subgroups`` list: one entry per column of ``sub`` (from ``inputs``)."""
    y = np.asarray(y_onehot).astype(int)
    s = np.asarray(scores, dtype=float)
    p = np.asarray(decisions).astype(int)
    g = np.asarray(groups).astype(str)
    k = 1 if positive is None else int(positive)
    out = []
    for name, values in sub["columns"]:
        a = assign(values, g, sub.get("bins", {}).get(name), sub.get("distinct", {}).get(name))
        labels = np.array([lab if lab is not None else "" for lab in a["labels"]], dtype=object)
        entry: dict = {"column": name, "kind": a["kind"], "groups": []}
        if "skipped" in a:
            entry["skipped"] = a["skipped"]
        for label in a["order"]:
            rows = np.nonzero(labels == label)[0]
            rest = np.nonzero(labels != label)[0]
            yg, gg = y[rows], g[rows]
            n_patients = len(np.unique(gg))
            per_class = [len(np.unique(gg[yg[:, c] == 1])) for c in range(y.shape[1])]
            group: dict = {"label": str(label), "patients": n_patients}
            if problem == "binary":
                group["positives"] = per_class[k]
                group["prevalence"] = round(per_class[k] / n_patients, 6) if n_patients else None
            else:
                group["positives"] = None
                group["prevalence"] = None
            small = n_patients < MIN_PATIENTS or min(per_class) < MIN_PER_CLASS
            if small:
                group.update({"auc": None, "sensitivity": None, "specificity": None, "flag": "too_small"})
                group["rest_auc"] = None
                entry["groups"].append(group)
                continue
            point, _ = _point(problem, yg, s[rows], p[rows], k)
            reps = [_point(problem, yg[i], s[rows][i], p[rows][i], k) for i in M._bootstrap(gg, n_boot, seed)]
            figures = M._with_intervals(point, {}, reps, [])
            rest_auc = _auc_of(problem, y[rest], s[rest]) if len(rest) and (y[rest].sum(0) > 0).all() else np.nan
            group.update(figures)
            hi = figures["auc"]["ci_high"]
            group["rest_auc"] = M._num(rest_auc)
            group["flag"] = "worse" if hi is not None and np.isfinite(rest_auc) and hi < rest_auc else None
            entry["groups"].append(group)
        out.append(entry)
    return out

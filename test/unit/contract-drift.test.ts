import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { contractErrors, loadSchema } from "../../src/contract/validate.js";
import { METRIC_NAMES, type ColumnSpec, type ImageSpec, type JobSpec, type Manifest, type PipelineKind } from "../../src/contract/types.js";
import { checkManifest, SERVED_FIELDS } from "../../src/serving/manifest.js";
import { parseConfig } from "../../src/config.js";
import { buildSpec } from "../../src/jobs/spec.js";
import { planSlots, type DeviceSlot } from "../../src/jobs/gpu-slots.js";
import { defaultPython, PIPELINES_DIR } from "../../src/jobs/pipeline-process.js";
import { experimentRequestSchema, withoutToken } from "../../src/experiments/request.js";
import { studyOf } from "../../src/experiments/study.js";

// The schemas in pipelines/contract are the one source. These tests fail when what TypeScript writes (job specs)
// or reads (manifest fields, event shapes, names) stops matching them; the Python side validates against the
// same files (pipelines/tests), and the last test has Python validate the very specs TypeScript builds.

const config = parseConfig({ BUILDER_DATA_DIR: os.tmpdir() });

const requests = {
  tabular: {
    task: "data",
    data_cols: ["a", "b"],
    type_of_experiment: "classification",
    subgroup_cols: ["a", "site"],
    subgroup_bins: { a: [1.5] },
  },
  vision_classification: { task: "vision", images_col: "image", type_of_experiment: "classification", subgroup_cols: ["scanner"] },
  detection: { task: "vision", images_col: "image", type_of_experiment: "detection" },
} as const;

function specFor(kind: PipelineKind, command: "train" | "evaluate", slot?: DeviceSlot): JobSpec {
  const request = withoutToken(
    experimentRequestSchema.parse({
      zip_gcloud: "u/d/data.zip",
      label_cols: ["label"],
      model_type: 0,
      optimization_type: 1,
      experiment_id: 7,
      user_id: "u",
      user_token: "secret",
      study_type: command === "train" ? "builder" : "Retrospective",
      optimization_metric: "F-macro",
      ...(command === "evaluate" ? { source_experiment_id: 6 } : {}),
      ...requests[kind],
    }),
  );
  const prepared = {
    report: { valid: true, errors: [], warnings: [], errors_omitted: 0, warnings_omitted: 0, summary: {} },
    sha256: "ab".repeat(32),
    root: "/data/root",
    table: "/data/root/table.csv",
    idCol: "id",
    imagesCol: kind === "tabular" ? null : "image",
    labelCols: ["label"],
    dataCols: kind === "tabular" ? ["a", "b"] : [],
    classNameCol: null,
    problem: kind === "detection" ? ("detection" as const) : ("binary" as const),
    split: { seed: 42, train: command === "train" ? ["1"] : [], val: command === "train" ? ["2"] : [], test: ["3"] },
  };
  return buildSpec(
    config,
    { id: "00000000-0000-0000-0000-000000000001" },
    studyOf(request, config),
    prepared,
    "/work/out",
    command === "evaluate" ? "/work/source" : undefined,
    slot,
  );
}

const cases = (["tabular", "vision_classification", "detection"] as const).flatMap((k) =>
  (["train", "evaluate"] as const).map((c) => [k, c] as const),
);

describe("contract drift", () => {
  it.each(cases)("the %s %s spec TypeScript builds satisfies job-spec.schema.json", (kind, command) => {
    const spec = specFor(kind, command);
    expect(contractErrors("job-spec", spec)).toEqual([]);
    expect(spec.kind).toBe(kind);
    // Subgroup columns reach the pipeline (classification only: the request refuses them for detection).
    expect(spec.data.subgroup_cols).toEqual(
      kind === "tabular" ? ["a", "site"] : kind === "vision_classification" ? ["scanner"] : undefined,
    );
    expect(spec.data.subgroup_bins).toEqual(kind === "tabular" ? { a: [1.5] } : undefined);
    // F-macro was asked for: classification is selected on it; detection is selected on map50 and sets its score threshold for it.
    expect([spec.metric, spec.threshold_metric]).toEqual(kind === "detection" ? ["map50", "f_macro"] : ["f_macro", "f_macro"]);
  });

  it("holds both sides to one reading of optimization_metric: rmse for regression, map50 for detection", () => {
    const binary = specFor("tabular", "train");
    const regression = { ...binary, problem: "regression" };
    expect(contractErrors("job-spec", { ...regression, metric: "rmse", threshold_metric: null })).toEqual([]);
    expect(contractErrors("job-spec", { ...regression, metric: "auc", threshold_metric: null }).join()).toMatch(/metric/);
    expect(contractErrors("job-spec", { ...regression, metric: "rmse", threshold_metric: "auc" }).join()).toMatch(/threshold_metric/);
    const detection = specFor("detection", "train");
    expect(contractErrors("job-spec", { ...detection, metric: "f_macro" }).join()).toMatch(/metric/);
    expect(contractErrors("job-spec", { ...detection, threshold_metric: "auc" }).join()).toMatch(/threshold_metric/);
    expect(contractErrors("job-spec", { ...binary, metric: "map50" }).join()).toMatch(/metric/);
  });

  it("a job in a device slot gets the slot's device and thread share, and the spec still satisfies the schema", () => {
    const [gpuSlot] = planSlots([{ index: "0", id: "GPU-x", name: "fake GPU", memoryMiB: 1024 }], { cpus: 8 });
    const [cpuSlot] = planSlots([], { slots: 2, cpus: 8 });
    const onGpu = specFor("detection", "train", gpuSlot);
    expect([onGpu.device, onGpu.options?.threads]).toEqual(["cuda", 8]);
    expect(contractErrors("job-spec", onGpu)).toEqual([]);
    const onCpu = specFor("vision_classification", "train", cpuSlot);
    expect([onCpu.device, onCpu.options?.threads]).toEqual(["cpu", 4]);
    expect(contractErrors("job-spec", onCpu)).toEqual([]);
  });

  it("refuses a spec with a field the schema does not know (additionalProperties stays false)", () => {
    expect(contractErrors("job-spec", { ...specFor("tabular", "train"), extra: 1 }).join()).toMatch(/extra/);
  });

  it("the manifest fields TypeScript reads are required by manifest.schema.json, with the same names", () => {
    const schema = loadSchema("manifest") as { required: string[]; properties: Record<string, any>; $defs: Record<string, any> };
    // Keys of the Manifest interface that are not optional: a compile error here means the type changed.
    const read: Array<keyof Manifest & string> = ["schema_version", "kind", "problem", "model_file", "metrics", "figures", "provenance"];
    for (const key of read) expect(schema.required).toContain(key);
    // Optional fields the server reads or writes (operating points): in the schema, with the same names and rules.
    const optional: Array<keyof Manifest & string> = ["operating_scores_file", "operating_point"];
    for (const key of optional) expect(Object.keys(schema.properties)).toContain(key);
    const rules: Array<NonNullable<Manifest["operating_point"]>["rule"]> = ["sensitivity", "specificity", "youden", "f1", "threshold"];
    expect(schema.properties.operating_point.properties.rule.enum).toEqual(rules);
    expect(schema.properties.metrics.required).toEqual(["test"]);
    expect(Object.keys(schema.$defs.metrics.properties).sort()).toEqual([...METRIC_NAMES].sort());
    expect(schema.$defs.metric.required).toEqual(["value", "ci_low", "ci_high"]);
    const provenance: Array<keyof Manifest["provenance"]> = [
      "dataset_sha256",
      "seed",
      "split_counts",
      "code_version",
      "time_taken_s",
      "created_at",
    ];
    expect(schema.properties.provenance.required.sort()).toEqual([...provenance].sort());
    const kinds: PipelineKind[] = ["vision_classification", "detection", "tabular"];
    expect(schema.properties.kind.enum.sort()).toEqual([...kinds].sort());
  });

  it("serving's view is the contract's manifest cut to what it reads, checked by the same schema", () => {
    const schema = loadSchema("manifest") as { properties: Record<string, any> };
    for (const f of SERVED_FIELDS) expect(Object.keys(schema.properties)).toContain(f);
    const image: Array<keyof ImageSpec> = [
      "width",
      "height",
      "channels",
      "resize",
      "interpolation",
      "pad_value",
      "scale",
      "mean",
      "std",
      "dicom",
    ];
    expect(Object.keys(schema.properties.input.properties.image.properties).sort()).toEqual([...image].sort());
    const column: Array<keyof ColumnSpec> = ["name", "type", "codes", "min", "max", "missing", "fill"];
    expect(Object.keys(schema.properties.input.properties.columns.items.properties).sort()).toEqual([...column].sort());
    const served = {
      schema_version: 1,
      kind: "tabular",
      problem: "regression",
      model_file: "model.onnx",
      input: { name: "x", columns: [{ name: "age", type: "numeric" }] },
      outputs: { scores: "scores" },
      classes: [{ index: 0, code: "y", name: "y" }],
      metric: "rmse",
      metrics: { test: {} },
    };
    expect(checkManifest(served)).toBe(served);
    // A schema rule (enum) and a serving-only rule (one mean per channel) are both enforced at load.
    const bad = {
      ...served,
      kind: "vision_classification",
      input: {
        name: "x",
        image: { width: 8, height: 8, channels: 3, resize: "crop", interpolation: "bilinear", scale: 1, mean: [0], std: [1] },
      },
    };
    expect(() => checkManifest(bad)).toThrow(/resize/);
    expect(() => checkManifest({ ...bad, input: { name: "x", image: { ...bad.input.image, resize: "stretch" } } })).toThrow(/mean\/std/);
    // A regression model published before `metric` was required still serves; publishing now requires it.
    const { metric: _metric, ...legacy } = served;
    expect(checkManifest(legacy)).toBe(legacy);
    expect(contractErrors("manifest", { ...legacy, figures: [], provenance: {} }).join()).toMatch(/metric/);
  });

  it("the event shapes TypeScript switches on are those of event.schema.json", () => {
    const schema = loadSchema("event") as { oneOf: Array<{ properties: Record<string, any> }> };
    expect(schema.oneOf.map((o) => o.properties.type.const).sort()).toEqual(["artifact", "log", "metric", "progress", "result"]);
    const stages = schema.oneOf.find((o) => o.properties.type.const === "progress")!.properties.stage.enum;
    expect(stages).toEqual(expect.arrayContaining(["training", "evaluating", "exporting"]));
    expect(contractErrors("event", { type: "progress", stage: "training", progress: 0.5, epoch: 1 })).toEqual([]);
    expect(contractErrors("event", { type: "progress", stage: "training", progress: 1.5 })).not.toEqual([]);
    expect(contractErrors("event", { type: "result" })).not.toEqual([]);
  });

  it("Python's validator accepts every spec TypeScript builds (both sides read the same schema files)", () => {
    const python = defaultPython(process.env.PYTHON_BIN);
    if (!fs.existsSync(path.join(PIPELINES_DIR, ".venv"))) return; // a fresh clone before `make install`
    const specs = cases.map(([k, c]) => specFor(k, c));
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "drift-")), "specs.json");
    fs.writeFileSync(file, JSON.stringify(specs));
    const script =
      "import json,sys\nfrom builder_pipelines.common.contract import errors\nprint(json.dumps([errors('job-spec', s) for s in json.load(open(sys.argv[1]))]))";
    const out = execFileSync(python, ["-c", script, file], {
      cwd: PIPELINES_DIR,
      env: { ...process.env, PYTHONPATH: PIPELINES_DIR },
    }).toString();
    expect(JSON.parse(out)).toEqual(specs.map(() => []));
  });
});

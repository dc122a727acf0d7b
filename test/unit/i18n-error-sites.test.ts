import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// An error is raised with a catalog key (msg("area.key", {values})), never a sentence: a sentence has no Spanish
// and is what the edge used to parse back. This reads every raise site in src/ (new ApiError and its subclasses,
// refuse(), errors.*(), the catalog-worded DicomError/DeidentifyError/RowFailure, a dataset check's DatasetFault and
// report.error/warn) and fails on a string or template literal where the words go, a details entry
// { message: "..." } written by hand, or a dataset problem ({ severity, code, message: "..." }) written by hand.

const SRC = resolve(import.meta.dirname, "../../src");

/** Where the words are in each kind of raise: the argument index. */
const NEW_WORDS: Record<string, number> = {
  ApiError: 2,
  OutboundRefusal: 2,
  DicomError: 1,
  DeidentifyError: 0,
  RowFailure: 0,
  BackboneInstallError: 0,
  DatasetFault: 1,
};
const CALL_WORDS: Record<string, number> = {
  refuse: 2,
  "errors.invalidRequest": 0,
  "errors.notFound": 0,
  "errors.forbidden": 0,
  "errors.conflict": 0,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const isText = (n: ts.Node | undefined): boolean =>
  !!n &&
  (ts.isStringLiteral(n) ||
    ts.isNoSubstitutionTemplateLiteral(n) ||
    ts.isTemplateExpression(n) ||
    (ts.isConditionalExpression(n) && (isText(n.whenTrue) || isText(n.whenFalse))) ||
    (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken && (isText(n.left) || isText(n.right))));

/** A hand-written details entry: an object literal whose `message` is a literal. */
function handWrittenDetails(n: ts.Node | undefined): boolean {
  if (!n || !ts.isArrayLiteralExpression(n)) return false;
  return n.elements.some(
    (e) =>
      ts.isObjectLiteralExpression(e) &&
      e.properties.some((p) => ts.isPropertyAssignment(p) && p.name.getText() === "message" && isText(p.initializer)),
  );
}

/** A dataset check's report (report, ctx.report, this.report): its error() and warn() take the words second. */
const isReportCall = (n: ts.CallExpression): boolean =>
  ts.isPropertyAccessExpression(n.expression) &&
  ["error", "warn"].includes(n.expression.name.text) &&
  /(^|\.)report$/.test(n.expression.expression.getText());

/**
 * A dataset problem written by hand: an object literal with a dataset severity ("error" or "warning"; a result
 * warning's "severe"/"caution" is worded from its facts elsewhere) and a literal message.
 */
function handWrittenProblem(n: ts.Node): boolean {
  if (!ts.isObjectLiteralExpression(n)) return false;
  const named = (name: string) =>
    n.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === name);
  const severity = named("severity")?.initializer;
  const message = named("message");
  return (
    !!severity && ts.isStringLiteral(severity) && ["error", "warning"].includes(severity.text) && !!message && isText(message.initializer)
  );
}

/** "file:line: what" for each raise with a literal sentence in `text` (a file's source). */
export function literalRaises(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (n: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}`;
  const visit = (n: ts.Node): void => {
    if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text in NEW_WORDS) {
      const args = n.arguments ?? [];
      if (isText(args[NEW_WORDS[n.expression.text]])) found.push(`${at(n)}: new ${n.expression.text} with a sentence`);
      if (n.expression.text === "ApiError" && handWrittenDetails(args[3])) found.push(`${at(n)}: details written by hand`);
    }
    // A subclass's super(status, code, words, ...): the words are the third argument, as in new ApiError.
    if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.SuperKeyword && isText(n.arguments[2]))
      found.push(`${at(n)}: super with a sentence`);
    if (ts.isCallExpression(n)) {
      const name = n.expression.getText(source);
      if (name in CALL_WORDS && isText(n.arguments[CALL_WORDS[name]])) found.push(`${at(n)}: ${name} with a sentence`);
      if (name === "errors.invalidRequest" && handWrittenDetails(n.arguments[1])) found.push(`${at(n)}: details written by hand`);
      if (name === "refuse" && handWrittenDetails(n.arguments[3])) found.push(`${at(n)}: details written by hand`);
      if (isReportCall(n) && isText(n.arguments[1])) found.push(`${at(n)}: ${name} with a sentence`);
    }
    if (handWrittenProblem(n)) found.push(`${at(n)}: dataset problem written by hand`);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

/** zod checks whose last argument is the message a user reads when the check fails. */
const CHECKS = new Set([
  "min",
  "max",
  "length",
  "int",
  "positive",
  "nonnegative",
  "negative",
  "gt",
  "gte",
  "lt",
  "lte",
  "finite",
  "regex",
  "refine",
  "email",
  "url",
  "uuid",
]);

/**
 * Validation schemas outside src/http (whose own scan is in http-error-language.test.ts) that a user's request or
 * an administrator's command meets: a check's message, an `error:` option or an issue's `message:` written as a
 * sentence instead of invalid("…") / ruleError("…") / ruleIssue("…"), which name catalog keys.
 */
export const SCHEMA_FILES = [
  "experiments/request-rules.ts",
  "experiments/request.ts",
  "experiments/dicom-options.ts",
  "backbones/store.ts",
];

/** "file:line: what" for each schema message written as a literal sentence in `text`. */
export function literalSchemaMessages(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (n: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}`;
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && CHECKS.has(n.expression.name.text)) {
      const last = n.arguments.at(-1);
      if (n.arguments.length > (n.expression.name.text === "refine" ? 1 : 0) && isText(last))
        found.push(`${at(n)}: .${n.expression.name.text}() with a sentence`);
    }
    if (ts.isPropertyAssignment(n) && ["error", "message"].includes(n.name.getText(source)) && isText(n.initializer))
      found.push(`${at(n)}: ${n.name.getText(source)}: with a sentence`);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

describe("errors are raised with catalog keys, not sentences", () => {
  const all = sourceFiles(SRC).flatMap((f) => literalRaises(relative(SRC, f), readFileSync(f, "utf8")));

  it("finds no raise with a literal sentence in src/", () => {
    expect(all).toEqual([]);
  });

  it("catches a planted sentence (the scan itself can fail)", () => {
    const planted = [
      'throw new ApiError(404, "not_found", `experiment ${id} not found`);',
      'throw new ApiError(400, "invalid_request", msg("x"), [{ field: "a", message: "required" }]);',
      'throw refuse(400, "invalid_uri", "the URL has no host");',
      'throw errors.notFound("experiment");',
      'throw new DicomError("invalid_dicom", cond ? "a" : "b");',
      'throw new ApiError(404, "not_found", msg("experiment.not_found", { id }));',
      'class X extends ApiError { constructor() { super(422, "unfamiliar_input", "this row is odd"); } }',
      "report.error(\"image_not_found\", `the image '${value}' is not in the zip`, { path: value });",
      'ctx.report.warn("class_too_small", "class too small");',
      'throw new DatasetFault("csv_missing", "the zip holds no .csv file");',
      'return { severity: "error", code: "positive_class_not_found", message: `no ${positive}` };',
      'report.error("image_not_found", problem("dataset.image_not_found", { image }), { path: image });',
      'logger.error("not a dataset check", err);',
    ].join("\n");
    expect(literalRaises("planted.ts", planted)).toEqual([
      "planted.ts:1: new ApiError with a sentence",
      "planted.ts:2: details written by hand",
      "planted.ts:3: refuse with a sentence",
      "planted.ts:4: errors.notFound with a sentence",
      "planted.ts:5: new DicomError with a sentence",
      "planted.ts:7: super with a sentence",
      "planted.ts:8: report.error with a sentence",
      "planted.ts:9: ctx.report.warn with a sentence",
      "planted.ts:10: new DatasetFault with a sentence",
      "planted.ts:11: dataset problem written by hand",
    ]);
  });

  it("finds no schema message written as a sentence in the request rules, the DICOM options or the backbone store", () => {
    const found = SCHEMA_FILES.flatMap((f) => literalSchemaMessages(f, readFileSync(join(SRC, f), "utf8")));
    expect(found).toEqual([]);
  });

  it("catches a planted schema sentence (the scan itself can fail)", () => {
    const planted = [
      'const a = z.string().min(1, "must be a non-empty column name");',
      "const b = z.array(x).refine((cols) => new Set(cols).size === cols.length, `must not name ${'a'} twice`);",
      'const c = z.number({ error: "must be a positive integer" });',
      'ctx.addIssue({ code: "custom", message: `not a bucket path: ${why}` });',
      "throw new BackboneInstallError(`cannot read ${source}`);",
      'const ok = z.string().min(1, invalid("validation.not_empty")).max(9, ruleError("validation.request.text")).regex(RE);',
      'ctx.addIssue({ code: "custom", message: words.message, params: { text: words.text } });',
    ].join("\n");
    expect([...literalSchemaMessages("planted.ts", planted), ...literalRaises("planted.ts", planted)]).toEqual([
      "planted.ts:1: .min() with a sentence",
      "planted.ts:2: .refine() with a sentence",
      "planted.ts:3: error: with a sentence",
      "planted.ts:4: message: with a sentence",
      "planted.ts:5: new BackboneInstallError with a sentence",
    ]);
  });
});

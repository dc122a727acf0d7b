import fs from "node:fs";
import path from "node:path";
import { parseNumber, resolveColumns, sheetRow, type CsvTable } from "./csv.js";
import { isImageFile, locateImage, pathCharProblem, type ImageInfo } from "./images.js";
import { DatasetFault, problem, type ReportBuilder } from "./report.js";
import { objectElements, tag } from "./voc-xml.js";

// Object-detection datasets in three layouts, all normalised to one row per box:
//  - CSV: patient id (column 1), image path, class, x1, y1, x2, y2 in pixels; an image without objects
//    has one row with an empty class (and empty coordinates).
//  - Pascal VOC: one XML per image (<filename>, <size>, <object><name><bndbox>).
//  - COCO: one JSON with images, annotations (bbox = [x, y, width, height]) and categories.
// VOC and COCO carry no patient: each image is its own patient (its file name without extension).

export interface Box {
  patient: string;
  /** Image path relative to the dataset root, once found. */
  image: string | null;
  /** As written in the source (for messages). */
  imageAsWritten: string;
  label: string;
  coords: [number, number, number, number] | null;
  where: { row?: number; path?: string; column?: string };
}

export const BOX_COLUMNS = ["x1", "y1", "x2", "y2"] as const;

export interface Ctx {
  report: ReportBuilder;
  files: Set<string>;
  top: string | null;
  byBase?: Map<string, string[]>;
}

function stem(p: string): string {
  return path.basename(p).replace(/\.[^.]+$/, "");
}

const stripTop = (f: string, top: string | null) => (top && f.startsWith(`${top}/`) ? f.slice(top.length + 1) : f);

/** File name -> archive paths, built once per dataset (VOC and COCO name images by file name). */
function baseIndex(ctx: Ctx): Map<string, string[]> {
  if (!ctx.byBase) {
    ctx.byBase = new Map();
    for (const f of ctx.files) {
      const b = path.posix.basename(f);
      const list = ctx.byBase.get(b) ?? [];
      list.push(f);
      ctx.byBase.set(b, list);
    }
  }
  return ctx.byBase;
}

/** Finds an image named in an annotation: as a path, or by its file name when it is unique in the archive. */
function findByName(name: string, ctx: Ctx, relativeTo?: string): string | null {
  const tries = [name, ...(relativeTo ? [path.posix.join(relativeTo, name)] : [])];
  for (const t of tries) {
    const f = locateImage(t, ctx.files, ctx.top);
    if (f.rel) return f.rel;
  }
  const matches = baseIndex(ctx).get(path.posix.basename(name)) ?? [];
  return matches.length === 1 ? stripTop(matches[0], ctx.top) : null;
}

export function boxesFromCsv(t: CsvTable, imagesCol: string, labelCol: string, ctx: Ctx, csvPath: string): Box[] | null {
  const cols = resolveColumns(t, [imagesCol, labelCol, ...BOX_COLUMNS], "detection", ctx.report, csvPath);
  if (cols.size !== 2 + BOX_COLUMNS.length) return null;
  const [ii, li] = [cols.get(imagesCol)!, cols.get(labelCol)!];
  const boxes: Box[] = [];
  t.rows.forEach((values, i) => {
    if (!values || values.length !== t.header.length) return;
    const row = sheetRow(i);
    const label = values[li];
    const raw = BOX_COLUMNS.map((c) => values[cols.get(c)!]);
    let coords: Box["coords"] = null;
    if (values[0] === "")
      ctx.report.error("patient_id_missing", problem("dataset.patient_id_missing", { row, column: t.header[0] }), {
        row,
        column: t.header[0],
      });
    if (label === "") {
      if (raw.some((v) => v !== ""))
        ctx.report.error("box_class_missing", problem("dataset.box_class_missing", { row }), { row, column: labelCol });
    } else {
      const nums = raw.map((v) => parseNumber(v, t.delimiter));
      const bad = nums.findIndex((n) => n === null);
      if (bad >= 0)
        ctx.report.error("box_not_numeric", problem("dataset.box_not_numeric", { row, column: BOX_COLUMNS[bad], value: raw[bad] }), {
          row,
          column: BOX_COLUMNS[bad],
        });
      else coords = nums as [number, number, number, number];
    }
    const value = values[ii];
    const image = value === "" ? null : imageOf(value, ctx, { row, column: imagesCol });
    if (value === "")
      ctx.report.error("image_path_missing", problem("dataset.image_path_missing", { row, column: imagesCol }), { row, column: imagesCol });
    boxes.push({ patient: values[0], image, imageAsWritten: value, label, coords, where: { row, column: labelCol } });
  });
  return boxes;
}

function imageOf(value: string, ctx: Ctx, where: { row?: number; column?: string; path?: string }): string | null {
  const bad = pathCharProblem(value);
  if (bad) {
    ctx.report.error(
      "image_path_character",
      problem("dataset.box_image_path_character", {
        path: value,
        kind: bad.kind,
        char: bad.char,
        codepoint: bad.codepoint,
        position: bad.position,
        suggestion: bad.suggestion,
      }),
      { ...where, path: value },
    );
  }
  const f = locateImage(value, ctx.files, ctx.top);
  if (!f.rel) ctx.report.error("image_not_found", problem("dataset.image_not_found", { image: value }), { ...where, path: value });
  return f.rel;
}

/** Pascal VOC: a deliberately small reader for the fields VOC defines (no DTDs, no entities, no external refs). */
export async function boxesFromVoc(xmlFiles: string[], dir: string, ctx: Ctx): Promise<Box[]> {
  const boxes: Box[] = [];
  for (const xmlPath of xmlFiles) {
    const xml = await fs.promises.readFile(path.join(dir, ...xmlPath.split("/")), "utf8");
    if (!/<annotation[\s>]/.test(xml)) {
      ctx.report.error("voc_malformed", problem("dataset.voc_not_annotation", { path: xmlPath }), { path: xmlPath });
      continue;
    }
    const filename = tag(xml, "filename") ?? "";
    let image = filename ? findByName(filename, ctx) : null;
    if (!image) {
      // Some tools write a stale <filename>; the XML's own name is the usual fallback.
      const alt = [...baseIndex(ctx).entries()].filter(([b]) => isImageFile(b) && stem(b) === stem(xmlPath)).flatMap(([, l]) => l);
      if (alt.length === 1) image = stripTop(alt[0], ctx.top);
    }
    if (!image)
      ctx.report.error("image_not_found", problem("dataset.voc_image_not_found", { path: xmlPath, image: filename }), { path: xmlPath });
    const patient = stem(image ?? (filename || xmlPath));
    const objects = objectElements(xml);
    if (objects.length === 0) boxes.push({ patient, image, imageAsWritten: filename, label: "", coords: null, where: { path: xmlPath } });
    for (const obj of objects) {
      const label = tag(obj, "name") ?? "";
      const raw = ["xmin", "ymin", "xmax", "ymax"].map((k) => tag(obj, k));
      const nums = raw.map((v) => (v === undefined ? null : parseNumber(v, ",")));
      if (!label || nums.some((n) => n === null)) {
        ctx.report.error("voc_malformed", problem("dataset.voc_object_malformed", { path: xmlPath }), {
          path: xmlPath,
        });
        continue;
      }
      boxes.push({
        patient,
        image,
        imageAsWritten: filename,
        label,
        coords: nums as [number, number, number, number],
        where: { path: xmlPath },
      });
    }
  }
  return boxes;
}

interface CocoFile {
  images?: Array<{ id: number | string; file_name: string }>;
  annotations?: Array<{ image_id: number | string; category_id: number | string; bbox?: number[] }>;
  categories?: Array<{ id: number | string; name: string }>;
}

export function looksLikeCoco(value: unknown): value is CocoFile {
  const v = value as CocoFile;
  return !!v && typeof v === "object" && Array.isArray(v.images) && Array.isArray(v.annotations);
}

export function boxesFromCoco(coco: CocoFile, jsonPath: string, ctx: Ctx): Box[] {
  const cats = new Map((coco.categories ?? []).map((c) => [String(c.id), c.name]));
  const jsonDir = path.posix.dirname(ctx.top && jsonPath.startsWith(`${ctx.top}/`) ? jsonPath.slice(ctx.top.length + 1) : jsonPath);
  const images = new Map<string, { rel: string | null; name: string; boxes: number }>();
  for (const img of coco.images ?? []) {
    const rel = findByName(img.file_name, ctx, jsonDir === "." ? undefined : jsonDir) ?? findByName(`images/${img.file_name}`, ctx);
    if (!rel)
      ctx.report.error("image_not_found", problem("dataset.coco_image_not_found", { path: jsonPath, image: img.file_name }), {
        path: jsonPath,
      });
    images.set(String(img.id), { rel, name: img.file_name, boxes: 0 });
  }
  const boxes: Box[] = [];
  (coco.annotations ?? []).forEach((a, i) => {
    const img = images.get(String(a.image_id));
    const label = cats.get(String(a.category_id));
    const b = a.bbox;
    const where = { path: `${jsonPath}#annotations[${i}]` };
    if (!img || label === undefined || !Array.isArray(b) || b.length !== 4 || b.some((n) => typeof n !== "number")) {
      ctx.report.error("coco_malformed", problem("dataset.coco_malformed", { index: i, path: jsonPath }), where);
      return;
    }
    img.boxes++;
    boxes.push({
      patient: stem(img.name),
      image: img.rel,
      imageAsWritten: img.name,
      label,
      coords: [b[0], b[1], b[0] + b[2], b[1] + b[3]],
      where,
    });
  });
  for (const img of images.values()) {
    if (img.boxes === 0)
      boxes.push({ patient: stem(img.name), image: img.rel, imageAsWritten: img.name, label: "", coords: null, where: { path: jsonPath } });
  }
  return boxes;
}

/** Narrower or lower than this many pixels, a box outlines nothing a detector can learn (YOLO drops them too). */
export const MIN_BOX_SIDE = 1;
/** How far a box may overhang the image and still be clipped: a few pixels, or 2% of the side on large images. */
export const clipTolerance = (side: number) => Math.max(4, 0.02 * side);

/**
 * Box geometry against the decoded image sizes, the summary, and the boxes to train on. Trivia a careful annotator
 * would fix by hand are fixed here, each with a warning naming the row or file: corners given in the wrong order
 * are swapped, boxes overhanging the image by a few pixels are clipped, zero-area and sub-pixel boxes are dropped.
 * What cannot be interpreted stays an error: boxes inverted on both axes in most rows (another coordinate
 * convention, such as x, y, width, height), boxes far outside their image, and a class left with no box.
 */
export function checkBoxes(boxes: Box[], sizes: Map<string, ImageInfo>, report: ReportBuilder): Box[] {
  const withCoords = boxes.filter((b) => b.coords);
  const invertedBoth = withCoords.filter((b) => b.coords![0] > b.coords![2] && b.coords![1] > b.coords![3]);
  if (withCoords.length > 0 && invertedBoth.length > withCoords.length / 2) {
    report.error(
      "box_inverted",
      problem("dataset.box_inverted", { inverted: invertedBoth.length, boxes: withCoords.length }),
      invertedBoth[0].where,
    );
    return boxes;
  }
  const given: Record<string, number> = {};
  const classCounts: Record<string, number> = {};
  const seen = new Set<string>();
  const empty = new Set<string>();
  const withBoxes = new Set<string>();
  const kept: Box[] = [];
  let dropped = 0,
    clipped = 0,
    swapped = 0;
  for (const b of boxes) {
    const img = b.image ?? b.imageAsWritten;
    if (!b.coords) {
      if (b.label === "") empty.add(img);
      kept.push(b);
      continue;
    }
    given[b.label] = (given[b.label] ?? 0) + 1;
    const where = { ...b.where, path: b.where.path ?? b.imageAsWritten };
    const box = { box: b.coords.join(", "), image: b.imageAsWritten };
    let [x1, y1, x2, y2] = b.coords;
    if (x1 > x2 || y1 > y2) {
      [x1, x2, y1, y2] = [Math.min(x1, x2), Math.max(x1, x2), Math.min(y1, y2), Math.max(y1, y2)];
      report.warn("box_corners_swapped", problem("dataset.box_corners_swapped", { ...box, used: [x1, y1, x2, y2].join(", ") }), where);
      swapped++;
    }
    const info = b.image ? sizes.get(b.image) : undefined;
    if (info && "width" in info && (x1 < 0 || y1 < 0 || x2 > info.width || y2 > info.height)) {
      const over = Math.max(-x1, -y1, x2 - info.width, y2 - info.height);
      if (over > clipTolerance(Math.max(info.width, info.height)) || x1 >= info.width || y1 >= info.height || x2 <= 0 || y2 <= 0) {
        report.error(
          "box_outside_image",
          problem("dataset.box_outside_image", { ...box, width: info.width, height: info.height, over }),
          where,
        );
        continue;
      }
      [x1, y1, x2, y2] = [Math.max(0, x1), Math.max(0, y1), Math.min(info.width, x2), Math.min(info.height, y2)];
      report.warn(
        "box_clipped",
        problem("dataset.box_clipped", { ...box, width: info.width, height: info.height, over, used: [x1, y1, x2, y2].join(", ") }),
        where,
      );
      clipped++;
    }
    if (x2 - x1 < MIN_BOX_SIDE || y2 - y1 < MIN_BOX_SIDE) {
      report.warn("box_degenerate", problem("dataset.box_degenerate", { ...box, width: x2 - x1, height: y2 - y1 }), where);
      dropped++;
      continue;
    }
    withBoxes.add(img);
    classCounts[b.label] = (classCounts[b.label] ?? 0) + 1;
    const key = `${img}\u0000${b.label}\u0000${[x1, y1, x2, y2].join(",")}`;
    if (seen.has(key)) report.warn("duplicate_box", problem("dataset.duplicate_box", { label: b.label, image: b.imageAsWritten }), where);
    seen.add(key);
    kept.push({ ...b, coords: [x1, y1, x2, y2] });
  }
  for (const [label, n] of Object.entries(given)) {
    if (!classCounts[label]) report.error("class_no_boxes", problem("dataset.class_no_boxes", { count: n, label }));
  }
  for (const img of empty) {
    if (withBoxes.has(img))
      report.warn("image_empty_and_boxes", problem("dataset.image_empty_and_boxes", { image: img }), {
        path: img,
      });
  }
  if (Object.keys(given).length === 0) report.error("no_boxes", problem("dataset.no_boxes"));
  const images = new Set(boxes.map((b) => b.image ?? b.imageAsWritten));
  report.summary.boxes = Object.values(classCounts).reduce((a, b) => a + b, 0);
  report.summary.boxes_dropped = dropped;
  report.summary.boxes_clipped = clipped;
  report.summary.boxes_swapped = swapped;
  report.summary.images = images.size;
  report.summary.images_without_objects = [...empty].filter((i) => !withBoxes.has(i)).length;
  report.summary.patients = new Set(boxes.map((b) => b.patient)).size;
  report.summary.rows = boxes.length;
  report.summary.class_counts = { label: classCounts };
  return kept;
}

export async function readCoco(file: string, jsonPath: string): Promise<unknown> {
  const st = await fs.promises.stat(file);
  if (st.size > 256 * 1024 * 1024)
    throw new DatasetFault("coco_too_large", problem("dataset.coco_too_large", { path: jsonPath, max: "256 MB" }), { path: jsonPath });
  const text = await fs.promises.readFile(file, "utf8");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DatasetFault("coco_malformed", problem("dataset.coco_not_json", { path: jsonPath, why: (err as Error).message }), {
      path: jsonPath,
    });
  }
}

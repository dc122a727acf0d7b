import { describe, expect, it } from "vitest";
import { planEntry } from "../../src/datasets/extract.js";
import { DatasetFault } from "../../src/datasets/report.js";
import { refusals, size } from "../../src/batches/refusals.js";
import { ApiError, msg, say, type Message } from "../../src/errors.js";

// A batch fails after its 202, so why it failed reaches the sender as failure_reason, in the language of
// Accept-Language (the batch keeps the catalog words, failure_text). Every refusal a batch can give must say
// itself in Spanish: this builds each (a refusal added without a sample here fails the first test), and each
// zip-entry refusal of the dataset check that batches pass on.

const SAMPLES: { [K in keyof typeof refusals]: Parameters<(typeof refusals)[K]> } = {
  lineTooLong: [3, 1024 * 1024],
  quoteNotClosed: [12],
  quoteRunsOn: [12, 1024 * 1024],
  textAfterQuote: [2, "2 (“age”)"],
  missingColumns: [
    ["sex", "bmi"],
    ["age", "sex", "bmi", "site"],
  ],
  emptyTable: [],
  tooManyCells: [10_000_000, 5],
  workbookExpands: [35 * 1024 * 1024, 176 * 1024, 200],
  workbookTexts: [80 * 1024 * 1024, 64 * 1024 * 1024],
  resultsTooLarge: [32 * 1024 * 1024, 176 * 1024],
  zipUnreadable: [],
  zipDamagedAfter: ["scans/p01.png"],
  zipEntryDamaged: ["scans/p01.png"],
  zipTooManyEntries: [300_000, 200_000],
  imageTooLarge: ["scans/p01.png", 30 * 1024 * 1024, 20 * 1024 * 1024],
  noImages: [],
};

const EXTRA: Message[] = [
  msg("batch.server_stopped"),
  msg("batch.internal_stop"),
  msg("dataset.workbook_unreadable", { name: "the workbook" }),
  msg("dataset.workbook_no_rows", { name: "the workbook" }),
];

function zipEntryMessages(): Message[] {
  const limits = { maxEntries: 10, maxUncompressedBytes: 1e12, maxCompressionRatio: 200 };
  const plain = { externalFileAttributes: 0o100644 << 16, generalPurposeBitFlag: 0, uncompressedSize: 10, compressedSize: 10 };
  const cases: Array<[string, Partial<typeof plain>]> = [
    ["/etc/x.png", {}],
    ["../x.png", {}],
    ["a//x.png", {}],
    ["link.png", { externalFileAttributes: (0o120777 << 16) >>> 0 }],
    ["secret.png", { generalPurposeBitFlag: 1 }],
    ["bomb.png", { uncompressedSize: 500 * 1024 * 1024, compressedSize: 1024 }],
  ];
  return cases.map(([name, attrs]) => {
    try {
      planEntry(name, { ...plain, ...attrs }, limits);
    } catch (err) {
      expect(err).toBeInstanceOf(DatasetFault);
      return (err as DatasetFault).text!;
    }
    throw new Error(`${name} passed`);
  });
}

describe("batch refusals", () => {
  it("every refusal has a sample here", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(Object.keys(refusals).sort());
  });

  it("every refusal, and every zip entry the dataset check refuses, reads in Spanish", () => {
    const messages = [
      ...Object.entries(SAMPLES).map(([k, args]) => (refusals[k as keyof typeof refusals] as (...a: unknown[]) => ApiError)(...args).text!),
      ...EXTRA,
      ...zipEntryMessages(),
    ];
    for (const text of messages) {
      expect(text, String(text)).toBeDefined();
      const english = say(text, "en");
      expect(say(text, "es"), english).not.toBe(english);
    }
    expect(say(refusals.quoteNotClosed(12).text!, "es")).toBe(
      'la línea 12 abre un valor con una comilla (") que nunca se cierra, así que el resto del archivo se leería como ese único valor: cierre la comilla o quítela',
    );
  });

  it("says sizes as a person reads them", () => {
    expect([size(512), size(1024), size(176 * 1024 + 300), size(1.5 * 1024 * 1024), size(32 * 1024 * 1024), size(5 * 1024 ** 3)]).toEqual([
      "512 bytes",
      "1 KiB",
      "176 KiB",
      "1.5 MiB",
      "32 MiB",
      "5 GiB",
    ]);
  });
});

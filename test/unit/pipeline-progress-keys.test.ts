import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROGRESS_MESSAGES, PROGRESS_MESSAGES_FILE, progressWords } from "../../src/contract/progress-messages.js";
import { LOCALES_DIR } from "../../src/i18n/index.js";
import { createEventSink } from "../../src/jobs/event-sink.js";
import type { JobRun } from "../../src/jobs/job-run.js";
import type { Progress } from "../../src/experiments/state.js";
import { placeholdersOf } from "../../src/i18n/catalog-keys.js";

// Every progress message a pipeline can show is a key of pipelines/contract/progress-messages.json (the one list:
// pipelines/tests/test_progress_messages.py checks every events.progress in the Python sources against it). Here:
// each key has its words in both languages under progress:pipeline.<key>, naming exactly the values the contract
// lists, so a Spanish reader of a running build never gets a key, an English sentence or an unfilled {{value}}.

const messages = (lng: string) =>
  (JSON.parse(fs.readFileSync(path.join(LOCALES_DIR, lng, "progress.json"), "utf8")) as { pipeline: Record<string, string> }).pipeline;

describe("the pipelines' progress messages in the catalog", () => {
  it("reads the contract's list (the check can fail)", () => {
    expect(path.basename(PROGRESS_MESSAGES_FILE)).toBe("progress-messages.json");
    expect(Object.keys(PROGRESS_MESSAGES).length).toBeGreaterThan(10);
    expect(PROGRESS_MESSAGES.running_model_on_images).toEqual(["images"]);
  });

  for (const lng of ["en", "es"]) {
    it(`${lng}: every key the pipelines can emit, with the same values, and no message the pipelines cannot emit`, () => {
      const words = messages(lng);
      const wrong: string[] = [];
      for (const [key, values] of Object.entries(PROGRESS_MESSAGES)) {
        const message = words[key];
        if (!message?.trim()) wrong.push(`${key}: no message`);
        else if (placeholdersOf(message).join(",") !== [...values].sort().join(","))
          wrong.push(`${key}: names {${placeholdersOf(message).join(", ")}}, the contract {${[...values].sort().join(", ")}}`);
      }
      for (const key of Object.keys(words)) if (!Object.hasOwn(PROGRESS_MESSAGES, key)) wrong.push(`${key}: not in the contract`);
      expect(wrong).toEqual([]);
    });
  }

  it("says each message differently in Spanish (none left in English)", () => {
    const en = messages("en");
    const es = messages("es");
    expect(Object.keys(PROGRESS_MESSAGES).filter((k) => en[k] === es[k])).toEqual([]);
  });

  it("keeps a progress event's key only when the contract lists it with exactly its values", () => {
    expect(progressWords("running_model_on_images", { images: 3 })).toEqual({ key: "running_model_on_images", params: { images: 3 } });
    expect(progressWords("done", undefined)).toEqual({ key: "done" });
    expect(progressWords("done", {})).toEqual({ key: "done" });
    expect(progressWords("running_model_on_images", {})).toBeUndefined();
    expect(progressWords("running_model_on_images", { images: 3, extra: 1 })).toBeUndefined();
    expect(progressWords("not_a_key", undefined)).toBeUndefined();
    expect(progressWords(undefined, undefined)).toBeUndefined();
  });

  it("the job runner stores a progress event's key and values beside its English, and drops a key it does not know", async () => {
    const stored: Progress[] = [];
    const run = {
      deps: { repo: { setProgress: async (_id: string, _owner: string, p: Progress) => stored.push(p), addEvent: async () => undefined } },
      lease: { owner: "runner-1", abort: () => undefined },
      status: "preparing",
      uuid: "00000000-0000-0000-0000-000000000001",
      jobLog: () => undefined,
      log: { warn: () => undefined },
    } as unknown as JobRun;
    const sink = createEventSink(run);
    const message = "running the model on 12 images";
    sink.onEvent({ type: "progress", stage: "preparing", progress: 0.5, message, key: "running_model_on_images", params: { images: 12 } });
    await sink.flush();
    sink.onEvent({ type: "progress", stage: "preparing", progress: 1, message: "new words", key: "from_a_newer_pipeline" });
    await sink.flush();
    expect(stored.map(({ message, key, params }) => ({ message, key, params }))).toEqual([
      { message, key: "running_model_on_images", params: { images: 12 } },
      { message: "new words", key: undefined, params: undefined },
    ]);
  });
});

import type { BackendReply } from "../backend.js";
import type { ExperimentFacts } from "../facts.js";
import { reply, wordFor, type Lang } from "../language.js";
import { warningTitle } from "./warning-words.js";
import { quote } from "../safety.js";
import type { BuildTimes } from "../tools.js";
import type { Action } from "./intents.js";
import type { ReplyContext } from "./context.js";
import { mainMetric, metricLine, pageLink, reliableEnd, subgroupLine, testPatients } from "./templates.js";

// What the assistant cannot do, said plainly with where it is done (issue 39), and the one question it must never
// answer with a yes: whether a model is good enough for clinic. The chat only reads; every change is the user's,
// in the dashboard or the API.

/** Where each action is done, for one experiment (`N` when none was named). */
function whereDone(action: Action, id: number | undefined, lang: Lang): string {
  const n = id === undefined ? "{id}" : String(id);
  const page = id === undefined ? "/experiments" : `/experiments/${id}`;
  switch (action) {
    case "delete":
      return reply(lang, "limits.youCanDeleteItYourself", { page, n });
    case "retrain":
      return reply(lang, "limits.retrain", { kept: id ? reply(lang, "limits.retrainKept", { id }) : "" });
    case "threshold":
      return reply(lang, "limits.onTheResultPageThe", { page, n });
    case "cancel":
      return reply(lang, "limits.aQueuedOrRunningExperiment", { page, n });
    case "rename":
      return reply(lang, "limits.itsNameAndDescriptionAre", { page, n });
    case "upload":
      return reply(lang, "limits.uploadAZipWithBuilder");
    case "edit":
      return reply(lang, "limits.changesAreMadeOnThe", { page, n });
  }
}

export function cannotDoReply(ctx: ReplyContext, action: Action, experimentId?: number): BackendReply {
  const { lang } = ctx;
  const lead = reply(lang, "limits.cannot", { what: reply(lang, `limits.cannotWhat.${action}`) });
  return { reply: `${lead} ${whereDone(action, experimentId, lang)}`, references: [] };
}

/**
 * "Is it good enough for clinic?": never a yes. The model's own evidence (its main metric's interval, warnings and
 * worse subgroups), then what would answer the question: an external validation, a Retrospective study.
 */
export function clinicReadyReply(ctx: ReplyContext, f: ExperimentFacts): BackendReply {
  const { lang } = ctx;
  const id = f.experiment_id;
  const name = f.name ? ` ${quote(f.name, 60)}` : "";
  const lines = [reply(lang, "limits.iCanTTellYou", { id, name })];
  if (f.status !== "ready") lines.push(reply(lang, "limits.itIsNotReadyThere", { fStatus: f.status }));
  const main = mainMetric(f);
  const m = main ? f.metrics[main] : undefined;
  if (main && m)
    lines.push(`- ${metricLine(main, m, lang)}${testPatients(f, lang)}${m.ci_low !== null ? `: ${reliableEnd(main, m, lang)}` : ""}.`);
  if (main !== "auc" && f.metrics.auc) lines.push(`- ${metricLine("auc", f.metrics.auc, lang)}.`);
  if (f.warnings.length)
    lines.push(
      `- ${reply(lang, "limits.warnings")}: ${f.warnings
        .map((w) =>
          reply(lang, "templates.limitsWarningItem", {
            title: warningTitle(w, lang),
            code: w.code,
            severity: wordFor(lang, "words.severity", w.severity),
          }),
        )
        .join("; ")}.`,
    );
  const sub = subgroupLine(f, lang);
  if (sub) lines.push(`- ${sub}`);
  if (!f.warnings.length && !sub) lines.push(reply(lang, "limits.noWarningsAndNoSubgroup"));
  lines.push(reply(lang, "limits.beforeUsingItOnPatients", { id, pageLink: pageLink(id, lang) }));
  return { reply: lines.join("\n"), references: [] };
}

const duration = (s: number, lang: Lang) => (s < 90 ? `${s} s` : reply(lang, "limits.aboutMin", { round: Math.round(s / 60) }));

/** How long a build takes here: the budgets, then the user's own past builds of that kind as the best guide. */
export function buildTimeReply(ctx: ReplyContext, times: BuildTimes): BackendReply {
  const { lang } = ctx;
  const { fast, best } = times.budgets_s;
  const lines = [reply(lang, "limits.trainingRunsWithinABudget", { fast, best })];
  if (times.past.length) {
    const each = times.past.slice(0, 4).map((b) => {
      const size =
        b.images !== null
          ? reply(lang, "limits.images", { bImages: b.images })
          : b.rows !== null
            ? reply(lang, "limits.rows", { bRows: b.rows })
            : "";
      return `${reply(lang, "limits.experiment")} ${b.experiment_id}${size ? ` (${size})` : ""}: ${duration(b.took_s ?? 0, lang)}`;
    });
    lines.push(reply(lang, "limits.yourOwnPastBuildsHere", { join: each.join("; ") }));
  } else lines.push(reply(lang, "limits.youHaveNoFinishedBuild"));
  lines.push(reply(lang, "limits.moreDocsExperimentsMdBudgets"));
  return { reply: lines.join("\n"), references: [] };
}

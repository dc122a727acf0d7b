import { useTranslation } from "react-i18next";
import type { Experiment } from "../api/types";

/**
 * What a running pipeline is doing, in the reader's language: its catalog key (progress:pipeline.<key>, the words
 * of pipelines/contract/progress-messages.json) with its values; the pipeline's English when it sent no key (an
 * older pipeline) or a key this dashboard does not know. Progress arrives by the event stream as stored, so the
 * dashboard says it itself rather than relying on the API's Accept-Language.
 */
export function ProgressMessage({ progress }: { progress: Pick<NonNullable<Experiment["progress"]>, "message" | "key" | "params"> }) {
  const { t } = useTranslation();
  const text = progress.key
    ? t(`progress:pipeline.${progress.key}`, { ...progress.params, defaultValue: progress.message ?? "" })
    : progress.message;
  return text ? <p className="muted small">{text}</p> : null;
}

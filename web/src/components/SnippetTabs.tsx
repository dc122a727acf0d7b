import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { Snippets } from "../lib/snippets";
import { CopyButton } from "./ui";

const LANGS: Array<[keyof Snippets, string]> = [
  ["curl", "curl"],
  ["python", "Python"],
  ["javascript", "JavaScript"],
];

/** The three /predict snippets as tabs (arrow keys move between them, per the ARIA tabs pattern). */
export function SnippetTabs({ snippets }: { snippets: Snippets }) {
  const { t } = useTranslation("tryit");
  const [lang, setLang] = useState<keyof Snippets>("curl");
  return (
    <div className="snippets">
      <div role="tablist" aria-label={t("snippets.language")}>
        {LANGS.map(([k, label], i) => (
          <button
            key={k}
            role="tab"
            id={`tab-${k}`}
            aria-selected={lang === k}
            aria-controls="snippet-panel"
            tabIndex={lang === k ? 0 : -1}
            className={lang === k ? "tab active" : "tab"}
            onClick={() => setLang(k)}
            onKeyDown={(e) => {
              const d = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
              if (!d) return;
              const next = LANGS[(i + d + LANGS.length) % LANGS.length][0];
              setLang(next);
              document.getElementById(`tab-${next}`)?.focus();
            }}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="snippet-panel" aria-labelledby={`tab-${lang}`}>
        <pre tabIndex={0} data-testid={`snippet-${lang}`}>
          <code>{snippets[lang]}</code>
        </pre>
        <CopyButton text={snippets[lang]} />
        <p className="muted small">
          {t("snippets.setBefore")} <code>BUILDER_API_KEY</code> {t("snippets.setMiddle")}{" "}
          <a href="/settings/api">{t("common:nav.settingsApi")}</a>.
        </p>
      </div>
    </div>
  );
}

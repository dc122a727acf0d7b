import { useTranslation } from "react-i18next";
import { formatDate } from "../lib/format";
import { CopyButton } from "./ui";

/**
 * A one-time link shown once to the person who made it (an invitation, a password reset): Builder sends no e-mail,
 * so they copy it and pass it on. Settings → Users and Settings → Members both show one.
 */
export function OneTimeLinkCard(props: {
  title: string;
  what: string;
  link: string;
  expiresAt: string;
  testId: string;
  linkTestId: string;
  onDone: () => void;
}) {
  const { t } = useTranslation("settings");
  return (
    <div className="note key-once" role="status" data-testid={props.testId}>
      <h2>{props.title}</h2>
      <p>
        <strong>{t("api.copyNow")}</strong> {props.what} {t("users.worksUntil")} <strong>{formatDate(props.expiresAt)}</strong>.
      </p>
      <div className="key-row">
        <code className="secret" data-testid={props.linkTestId}>
          {props.link}
        </code>
        <CopyButton text={props.link} label={t("users.copyLink")} />
      </div>
      <div className="actions">
        <button type="button" className="secondary" onClick={props.onDone}>
          {t("users.passedOn")}
        </button>
      </div>
    </div>
  );
}

import { useTranslation } from "react-i18next";

/** The server's MIN_PASSWORD_LENGTH (src/auth/user.service.ts); the browser checks it first, the server decides. */
const MIN_PASSWORD_LENGTH = 12;

/** A new password typed twice (change password, invitation, reset link); the caller compares the two. */
export function NewPasswordFields({
  label,
  value,
  again,
  onValue,
  onAgain,
}: {
  /** "New password" or "Password": the second field is "<label> again". */
  label: string;
  value: string;
  again: string;
  onValue: (v: string) => void;
  onAgain: (v: string) => void;
}) {
  const { t } = useTranslation();
  return (
    <>
      <label>
        {t("password.atLeast", { label, count: MIN_PASSWORD_LENGTH })}
        <input
          type="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          value={value}
          onChange={(e) => onValue(e.target.value)}
        />
      </label>
      <label>
        {t("password.again", { label })}
        <input
          type="password"
          autoComplete="new-password"
          required
          minLength={MIN_PASSWORD_LENGTH}
          value={again}
          onChange={(e) => onAgain(e.target.value)}
        />
      </label>
    </>
  );
}

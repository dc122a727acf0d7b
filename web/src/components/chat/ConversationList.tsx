import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/typed";
import type { ConversationList as ConversationPage, ConversationSummary } from "../../api/types";
import { formatDate } from "../../lib/format";
import { ErrorBox } from "../ui";

/**
 * The user's conversations, newest activity first: open one, or delete it (asked once more in the row itself, so a
 * stray click deletes nothing). `version` changes when a reply was stored, to reload the list.
 */
export function ConversationList({
  current,
  version,
  onOpen,
  onDeleted,
}: {
  current: string | null;
  version: number;
  onOpen: (id: string) => void;
  onDeleted: (id: string) => void;
}) {
  const { t } = useTranslation("chat");
  const [page, setPage] = useState<ConversationPage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);

  useEffect(() => {
    let live = true;
    call("get", "/v1/chat/conversations", { query: { limit: 50 } }).then(
      (p) => live && (setPage(p), setError(null)),
      (err) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [version, reloads]);

  const remove = async (c: ConversationSummary) => {
    try {
      await call("delete", "/v1/chat/conversations/{conversation_id}", { path: { conversation_id: c.id } });
      setConfirming(null);
      onDeleted(c.id);
      setReloads((n) => n + 1);
    } catch (err) {
      setError(err);
    }
  };

  if (error) return <ErrorBox error={error} title={t("list.error")} />;
  if (!page) return <p aria-busy="true">{t("list.loading")}</p>;
  if (page.data.length === 0) return <p className="muted">{t("list.empty")}</p>;
  return (
    <>
      <ul className="chat-conversations" aria-label={t("list.label")}>
        {page.data.map((c) => (
          <li key={c.id} className={c.id === current ? "current" : undefined}>
            {confirming === c.id ? (
              <div role="group" aria-label={t("list.confirmLabel", { title: c.title })} className="chat-confirm">
                <span className="chat-confirm-text">{t("list.confirm", { title: c.title })}</span>
                <button type="button" className="danger" onClick={() => void remove(c)}>
                  {t("list.delete")}
                </button>
                <button type="button" className="secondary" autoFocus onClick={() => setConfirming(null)}>
                  {t("list.keep")}
                </button>
              </div>
            ) : (
              <>
                <button
                  type="button"
                  className="link chat-open-conversation"
                  aria-current={c.id === current ? "true" : undefined}
                  onClick={() => onOpen(c.id)}
                >
                  <span className="chat-conversation-title">{c.title}</span>
                  <span className="muted small">{t("list.meta", { count: c.messages, date: formatDate(c.updated_at) })}</span>
                </button>
                <button
                  type="button"
                  className="secondary small"
                  aria-label={t("list.deleteLabel", { title: c.title })}
                  onClick={() => setConfirming(c.id)}
                >
                  {t("list.delete")}
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      {page.has_more && <p className="muted small">{t("list.more", { count: page.data.length, total: page.total })}</p>}
    </>
  );
}

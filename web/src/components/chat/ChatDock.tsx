import { lazy, Suspense, useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { useTranslation } from "react-i18next";
import { match, useLocation } from "../../lib/router";
import "./chat.css";

// The panel's code loads on the first open: the first page load carries only this button.
const ChatPanel = lazy(() => import("./ChatPanel").then((m) => ({ default: m.ChatPanel })));

const OPEN_KEY = "builder.chat.open";
/** Where the panel is a full-screen sheet rather than a docked column (the same width as in chat.css). */
const SHEET_MEDIA = "(max-width: 900px)";

/** The experiment the page shows (its page or its Try it page), which "this model" in a question means. */
export function pageExperiment(path: string): number | undefined {
  const m = match("/experiments/:id", path) ?? match("/experiments/:id/try", path);
  const id = m && /^\d+$/.test(m.id) ? Number(m.id) : undefined;
  return id && id > 0 ? id : undefined;
}

/**
 * The assistant on every page: a button in the top bar opens a panel docked at the right edge (the page moves
 * over to make room, so nothing on it is covered) or, on a phone, a full-screen sheet with its own close button.
 * Escape closes it and gives focus back to the button. Its conversation survives page changes and closing.
 */
export function ChatDock() {
  const { t } = useTranslation("chat");
  const { path } = useLocation();
  const [open, setOpen] = useState(() => sessionStorage.getItem(OPEN_KEY) === "1");
  const [loaded, setLoaded] = useState(open);
  const [openedAt, setOpenedAt] = useState(0);
  const toggle = useRef<HTMLButtonElement>(null);

  const returnFocus = useRef(false);

  useEffect(() => {
    document.body.classList.toggle("chat-open", open);
    sessionStorage.setItem(OPEN_KEY, open ? "1" : "0");
    // On a phone the sheet covers the page: keyboard and screen reader stay in it until it is closed.
    const sheet = window.matchMedia(SHEET_MEDIA);
    const behind = () => [document.querySelector("header.top"), document.getElementById("main")];
    const apply = () => behind().forEach((el) => el?.toggleAttribute("inert", open && sheet.matches));
    apply();
    sheet.addEventListener("change", apply);
    if (!open && returnFocus.current) {
      returnFocus.current = false;
      toggle.current?.focus();
    }
    return () => {
      sheet.removeEventListener("change", apply);
      behind().forEach((el) => el?.removeAttribute("inert"));
      document.body.classList.remove("chat-open");
    };
  }, [open]);

  const close = () => {
    returnFocus.current = true;
    setOpen(false);
  };

  return (
    <>
      <button
        ref={toggle}
        type="button"
        className="secondary chat-toggle"
        aria-expanded={open}
        aria-controls={loaded ? "chat-panel" : undefined}
        onClick={() => (open ? close() : (setOpen(true), setLoaded(true), setOpenedAt(Date.now())))}
      >
        {open ? t("toggle.hide") : t("toggle.show")}
      </button>
      {loaded &&
        createPortal(
          <aside
            id="chat-panel"
            className="chat-panel"
            aria-labelledby="chat-title"
            hidden={!open}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.stopPropagation();
                close();
              }
            }}
          >
            <Suspense fallback={<p aria-busy="true">{t("loading")}</p>}>
              <ChatPanel experimentId={pageExperiment(path)} openedAt={openedAt} onClose={close} />
            </Suspense>
          </aside>,
          document.body,
        )}
    </>
  );
}

import { createContext, useContext } from "react";
import type { Session } from "./api/types";

export interface SessionState {
  session: Session;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside a signed-in page");
  return s;
}

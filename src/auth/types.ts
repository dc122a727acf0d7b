import type { Request, Response } from "express";

/** Who made the request. Routes see only this, whatever the credential was. */
export interface AuthInfo {
  userId: string;
  email: string;
  via: "api_key" | "session";
  keyId?: string;
  sessionId?: string;
}

/**
 * none: public. api_key: Authorization: Bearer <key> (rate limited).
 * session: dashboard cookie + CSRF header on unsafe methods. any: either of the two.
 */
export type AuthMode = "none" | "api_key" | "session" | "any";

/** Resolves the caller for a route's auth mode, or throws the ApiError (401/403/429) that refuses it; null for "none". */
export type Authenticate = (req: Request, res: Response, mode: AuthMode) => Promise<AuthInfo | null>;

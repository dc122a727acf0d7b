import type { Request, Response } from "express";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { ApiError } from "../http/errors.js";
import type { AuthInfo, AuthMode } from "../http/route.js";
import type { Logger } from "../logger.js";

// Skeleton: refuses every authenticated request until API keys land (issue 2).
export interface Auth {
  authenticate(req: Request, res: Response, mode: AuthMode): Promise<AuthInfo | null>;
  close(): Promise<void>;
}

export async function createAuth(_deps: { config: Config; db: Db; logger: Logger }): Promise<Auth> {
  return {
    async authenticate(req, _res, mode) {
      if (mode === "none") return null;
      if (!req.get("authorization")) throw new ApiError(401, "missing_api_key", "send your API key as Authorization: Bearer <key>");
      throw new ApiError(401, "invalid_api_key", "the API key is not valid");
    },
    async close() {},
  };
}

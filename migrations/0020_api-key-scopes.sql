-- Key scopes (issue 50): what a key may do, which models a predict key may call, and when it stops working.
-- Existing keys get scopes NULL, which means full access, so that no running program breaks at the upgrade.
ALTER TABLE "api_keys" ADD COLUMN "scopes" text[];--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "model_ids" text[];--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
-- A cached key lookup carries these three too: a change to any of them (an operator narrowing a legacy key with
-- SQL) must drop the cached copies on every replica, as a revocation does (migration 0001).
DROP TRIGGER IF EXISTS api_keys_changed_update ON api_keys;--> statement-breakpoint
CREATE TRIGGER api_keys_changed_update AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
    OR OLD.rate_limit_per_minute IS DISTINCT FROM NEW.rate_limit_per_minute
    OR OLD.user_id IS DISTINCT FROM NEW.user_id
    OR OLD.key_hash IS DISTINCT FROM NEW.key_hash
    OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id
    OR OLD.scopes IS DISTINCT FROM NEW.scopes
    OR OLD.model_ids IS DISTINCT FROM NEW.model_ids
    OR OLD.expires_at IS DISTINCT FROM NEW.expires_at)
  EXECUTE FUNCTION builder_notify_api_key_changed();

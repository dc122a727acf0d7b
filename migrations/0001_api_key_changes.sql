-- Every change that can make a cached API-key lookup wrong (revocation, a new rate limit, a new owner or hash,
-- deletion, including cascades from users) is announced on the channel builder_api_key_changed with the key's
-- hash, so every server process can drop its cached copy at once. Written as a trigger so that any writer,
-- the CLI, the dashboard or an operator's own SQL, is covered. last_used_at writes are not announced.
CREATE OR REPLACE FUNCTION builder_notify_api_key_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('builder_api_key_changed', OLD.key_hash);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER api_keys_changed_update AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
    OR OLD.rate_limit_per_minute IS DISTINCT FROM NEW.rate_limit_per_minute
    OR OLD.user_id IS DISTINCT FROM NEW.user_id
    OR OLD.key_hash IS DISTINCT FROM NEW.key_hash)
  EXECUTE FUNCTION builder_notify_api_key_changed();
--> statement-breakpoint
CREATE TRIGGER api_keys_changed_delete AFTER DELETE ON api_keys FOR EACH ROW
  EXECUTE FUNCTION builder_notify_api_key_changed();

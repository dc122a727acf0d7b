-- Deletion and erasure (issue 38). users.erasing_at marks an account whose erasure has begun: it is resumed at
-- start-up until the row is gone. Experiments being deleted carry status 'deleting' (a text column: no DDL).
ALTER TABLE "users" ADD COLUMN "erasing_at" timestamp with time zone;
--> statement-breakpoint
-- Every removed model version is announced on builder_model_removed as "<user_id>:<experiment_id>:<model id>",
-- so every serving replica unloads it at once (the same way migration 0001 carries API-key revocations). A
-- trigger, so that cascades from experiments and users and an operator's own SQL are covered too.
CREATE OR REPLACE FUNCTION builder_notify_model_removed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('builder_model_removed', OLD.user_id::text || ':' || OLD.experiment_id::text || ':' || OLD.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER models_removed AFTER DELETE ON models FOR EACH ROW
  EXECUTE FUNCTION builder_notify_model_removed();

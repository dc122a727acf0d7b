-- Model versions and rollback (issue 37, operating points). The version served is the one made current last:
-- at publication (the default), or later by rollback. Existing rows keep "the newest version is served".
ALTER TABLE "models" ADD COLUMN "made_current_at" timestamp with time zone DEFAULT now() NOT NULL;
--> statement-breakpoint
UPDATE "models" SET "made_current_at" = "created_at";
--> statement-breakpoint
-- Every change of an experiment's current version (a new version published, an operating point saved, a rollback)
-- is announced on builder_model_current as "<user_id>:<experiment_id>:<model id>", so every serving replica
-- switches at once (as migration 0006 announces removed versions).
CREATE OR REPLACE FUNCTION builder_notify_model_current() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('builder_model_current', NEW.user_id::text || ':' || NEW.experiment_id::text || ':' || NEW.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER models_current AFTER INSERT OR UPDATE OF made_current_at ON models FOR EACH ROW
  EXECUTE FUNCTION builder_notify_model_current();

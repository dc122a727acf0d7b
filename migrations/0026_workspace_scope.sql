DROP INDEX "batches_user_created";--> statement-breakpoint
DROP INDEX "experiments_user_number";--> statement-breakpoint
DROP INDEX "models_user_experiment";--> statement-breakpoint
ALTER TABLE "batches" ALTER COLUMN "workspace_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "chat_conversations" ALTER COLUMN "workspace_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "experiments" ALTER COLUMN "workspace_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "files" ALTER COLUMN "workspace_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "models" ALTER COLUMN "workspace_id" SET NOT NULL;--> statement-breakpoint
CREATE INDEX "audit_events_workspace" ON "audit_events" USING btree ("workspace_id","seq");--> statement-breakpoint
CREATE INDEX "batches_workspace_created" ON "batches" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "batches_user" ON "batches" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "chat_conversations_workspace" ON "chat_conversations" USING btree ("workspace_id","updated_at");--> statement-breakpoint
CREATE UNIQUE INDEX "experiments_workspace_number" ON "experiments" USING btree ("workspace_id","experiment_id");--> statement-breakpoint
CREATE INDEX "experiments_user" ON "experiments" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "models_workspace_experiment" ON "models" USING btree ("workspace_id","experiment_id");--> statement-breakpoint
CREATE INDEX "models_user" ON "models" USING btree ("user_id");--> statement-breakpoint
-- A model version's cache key is its workspace's number from here on (experiment_id is unique within a workspace):
-- the notifications of migrations 0006 and 0010 name the workspace instead of the user.
CREATE OR REPLACE FUNCTION builder_notify_model_removed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('builder_model_removed', OLD.workspace_id::text || ':' || OLD.experiment_id::text || ':' || OLD.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION builder_notify_model_current() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('builder_model_current', NEW.workspace_id::text || ':' || NEW.experiment_id::text || ':' || NEW.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
-- An API key carries its maker's role in its workspace, cached with the key (the /predict hot path asks nothing
-- more): a role changed or a member removed drops those keys from every replica's cache, as 0009 does for users.
CREATE OR REPLACE FUNCTION builder_notify_member_keys_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('builder_api_key_changed', key_hash) FROM api_keys WHERE workspace_id = OLD.workspace_id AND user_id = OLD.user_id;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER workspace_members_keys_changed AFTER UPDATE OR DELETE ON "workspace_members" FOR EACH ROW EXECUTE FUNCTION builder_notify_member_keys_changed();

CREATE TABLE "workspace_members" (
	"workspace_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workspace_members_workspace_id_user_id_pk" PRIMARY KEY("workspace_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"personal_owner_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workspaces_personal_owner_id_unique" UNIQUE("personal_owner_id")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "chat_conversations" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "files" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_personal_owner_id_users_id_fk" FOREIGN KEY ("personal_owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "workspace_members_user" ON "workspace_members" USING btree ("user_id");--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "batches" ADD CONSTRAINT "batches_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chat_conversations" ADD CONSTRAINT "chat_conversations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Every existing user gets a personal workspace, owned by them; nothing is lost: each owned row below is only given
-- its owner's personal workspace. Its name is not the e-mail, so that no copy of it outlives an erasure.
INSERT INTO "workspaces" ("name", "personal_owner_id") SELECT 'Personal', "id" FROM "users";
--> statement-breakpoint
INSERT INTO "workspace_members" ("workspace_id", "user_id", "role")
  SELECT "id", "personal_owner_id", 'owner' FROM "workspaces" WHERE "personal_owner_id" IS NOT NULL;
--> statement-breakpoint
UPDATE "api_keys" t SET "workspace_id" = w."id" FROM "workspaces" w WHERE w."personal_owner_id" = t."user_id";
--> statement-breakpoint
UPDATE "batches" t SET "workspace_id" = w."id" FROM "workspaces" w WHERE w."personal_owner_id" = t."user_id";
--> statement-breakpoint
UPDATE "chat_conversations" t SET "workspace_id" = w."id" FROM "workspaces" w WHERE w."personal_owner_id" = t."user_id";
--> statement-breakpoint
UPDATE "experiments" t SET "workspace_id" = w."id" FROM "workspaces" w WHERE w."personal_owner_id" = t."user_id";
--> statement-breakpoint
UPDATE "files" t SET "workspace_id" = w."id" FROM "workspaces" w WHERE w."personal_owner_id" = t."user_id";
--> statement-breakpoint
UPDATE "models" t SET "workspace_id" = w."id" FROM "workspaces" w WHERE w."personal_owner_id" = t."user_id";
--> statement-breakpoint
-- audit_events is append-only (0007's trigger): its one-time backfill runs with that trigger off, inside this
-- migration's transaction, and the trigger is back before anything else can write.
ALTER TABLE "audit_events" DISABLE TRIGGER "audit_events_append_only";
--> statement-breakpoint
UPDATE "audit_events" t SET "workspace_id" = w."id" FROM "workspaces" w WHERE w."personal_owner_id" = t."actor_id";
--> statement-breakpoint
ALTER TABLE "audit_events" ENABLE TRIGGER "audit_events_append_only";
--> statement-breakpoint
-- A new user gets their personal workspace in the transaction that creates the account, whichever code inserts it.
CREATE OR REPLACE FUNCTION builder_personal_workspace() RETURNS trigger AS $$
DECLARE ws uuid;
BEGIN
  INSERT INTO "workspaces" ("name", "personal_owner_id") VALUES ('Personal', NEW."id") RETURNING "id" INTO ws;
  INSERT INTO "workspace_members" ("workspace_id", "user_id", "role") VALUES (ws, NEW."id", 'owner');
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER users_personal_workspace AFTER INSERT ON "users" FOR EACH ROW EXECUTE FUNCTION builder_personal_workspace();
--> statement-breakpoint
-- Until the services name a workspace, a row written without one belongs to its owner's personal workspace.
CREATE OR REPLACE FUNCTION builder_default_workspace() RETURNS trigger AS $$
BEGIN
  IF NEW."workspace_id" IS NULL THEN
    SELECT "id" INTO NEW."workspace_id" FROM "workspaces" WHERE "personal_owner_id" = NEW."user_id";
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION builder_default_workspace_audit() RETURNS trigger AS $$
BEGIN
  IF NEW."workspace_id" IS NULL THEN
    SELECT "id" INTO NEW."workspace_id" FROM "workspaces" WHERE "personal_owner_id" = NEW."actor_id";
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER api_keys_default_workspace BEFORE INSERT ON "api_keys" FOR EACH ROW EXECUTE FUNCTION builder_default_workspace();
--> statement-breakpoint
CREATE TRIGGER batches_default_workspace BEFORE INSERT ON "batches" FOR EACH ROW EXECUTE FUNCTION builder_default_workspace();
--> statement-breakpoint
CREATE TRIGGER chat_conversations_default_workspace BEFORE INSERT ON "chat_conversations" FOR EACH ROW EXECUTE FUNCTION builder_default_workspace();
--> statement-breakpoint
CREATE TRIGGER experiments_default_workspace BEFORE INSERT ON "experiments" FOR EACH ROW EXECUTE FUNCTION builder_default_workspace();
--> statement-breakpoint
CREATE TRIGGER files_default_workspace BEFORE INSERT ON "files" FOR EACH ROW EXECUTE FUNCTION builder_default_workspace();
--> statement-breakpoint
CREATE TRIGGER models_default_workspace BEFORE INSERT ON "models" FOR EACH ROW EXECUTE FUNCTION builder_default_workspace();
--> statement-breakpoint
CREATE TRIGGER audit_events_default_workspace BEFORE INSERT ON "audit_events" FOR EACH ROW EXECUTE FUNCTION builder_default_workspace_audit();

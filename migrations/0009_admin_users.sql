CREATE TABLE "account_links" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"token_hash" text NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"email" text,
	"user_id" uuid,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"used_by" uuid,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "account_links_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "role" text DEFAULT 'member' NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "disabled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "account_links" ADD CONSTRAINT "account_links_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_links" ADD CONSTRAINT "account_links_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_links_kind_created" ON "account_links" USING btree ("kind","created_at");--> statement-breakpoint
CREATE INDEX "account_links_user" ON "account_links" USING btree ("user_id");--> statement-breakpoint
-- Databases from before roles existed: the oldest account (not one being erased) becomes the administrator, so
-- every existing install has one who can open Settings → Users. On a fresh database this changes nothing; the
-- first account (POST /v1/setup, or `./builder users create` on an empty server) is made an administrator then.
UPDATE "users" SET "role" = 'admin'
  WHERE "id" = (SELECT "id" FROM "users" WHERE "erasing_at" IS NULL ORDER BY "created_at", "id" LIMIT 1);
--> statement-breakpoint
-- Disabling an account (or changing its role) must reach every server process's API-key cache at once, like a
-- revocation: the user's keys are announced on migration 0001's channel, so each process drops its cached copy
-- (the next lookup reads the user's new state). Any writer is covered: the dashboard, the CLI, plain SQL.
CREATE OR REPLACE FUNCTION builder_notify_user_keys_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('builder_api_key_changed', key_hash) FROM api_keys WHERE user_id = NEW.id;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER users_access_changed AFTER UPDATE ON users FOR EACH ROW
  WHEN (OLD.disabled_at IS DISTINCT FROM NEW.disabled_at OR OLD.role IS DISTINCT FROM NEW.role)
  EXECUTE FUNCTION builder_notify_user_keys_changed();

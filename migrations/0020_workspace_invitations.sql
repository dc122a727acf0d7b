ALTER TABLE "account_links" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "account_links" ADD COLUMN "workspace_role" text;--> statement-breakpoint
ALTER TABLE "account_links" ADD CONSTRAINT "account_links_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;
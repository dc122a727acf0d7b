ALTER TABLE "models" ADD COLUMN "approved_by" uuid;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "approved_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "models" ADD COLUMN "approved_intended_use" text;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "require_approval" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "models" ADD CONSTRAINT "models_approved_by_users_id_fk" FOREIGN KEY ("approved_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;
CREATE TABLE "pacs_connections" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"dicomweb_url" text NOT NULL,
	"username" text,
	"password_sealed" text,
	"caption" text,
	"secondary_capture" boolean DEFAULT true NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "pacs_send_back" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "pacs_connections" ADD CONSTRAINT "pacs_connections_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;
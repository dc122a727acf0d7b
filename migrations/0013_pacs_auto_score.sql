CREATE TABLE "pacs_auto_score_rules" (
	"user_id" uuid NOT NULL,
	"experiment_id" integer NOT NULL,
	"enabled" boolean DEFAULT false NOT NULL,
	"modality" text,
	"body_part" text,
	"series_description" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pacs_auto_score_rules_user_id_experiment_id_pk" PRIMARY KEY("user_id","experiment_id")
);
--> statement-breakpoint
CREATE TABLE "pacs_auto_scored" (
	"user_id" uuid NOT NULL,
	"experiment_id" integer NOT NULL,
	"sop_instance_uid" text NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"sr_instance_uid" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pacs_auto_scored_user_id_experiment_id_sop_instance_uid_pk" PRIMARY KEY("user_id","experiment_id","sop_instance_uid")
);
--> statement-breakpoint
CREATE TABLE "pacs_feed_cursors" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"last_seq" bigint DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "pacs_auto_score_rules" ADD CONSTRAINT "pacs_auto_score_rules_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pacs_auto_scored" ADD CONSTRAINT "pacs_auto_scored_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pacs_feed_cursors" ADD CONSTRAINT "pacs_feed_cursors_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;
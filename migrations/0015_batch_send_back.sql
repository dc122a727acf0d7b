ALTER TABLE "batches" ADD COLUMN "send_back" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "pacs_sent" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "pacs_failed" integer DEFAULT 0 NOT NULL;
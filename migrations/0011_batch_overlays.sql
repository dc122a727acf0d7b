ALTER TABLE "batches" ADD COLUMN "overlays" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "file_name" text;
ALTER TABLE "experiments" ADD COLUMN "name" text;--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "description" text;
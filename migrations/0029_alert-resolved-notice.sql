DROP INDEX "monitoring_alert_deliveries_once";--> statement-breakpoint
ALTER TABLE "monitoring_alert_deliveries" ADD COLUMN "event" text DEFAULT 'opened' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "monitoring_alert_deliveries_once" ON "monitoring_alert_deliveries" USING btree ("alert_id","event","channel","target");
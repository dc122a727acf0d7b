ALTER TABLE "monitoring_alerts" ADD COLUMN "acknowledged_by" uuid;--> statement-breakpoint
ALTER TABLE "monitoring_alerts" ADD COLUMN "resolved_by" uuid;--> statement-breakpoint
ALTER TABLE "monitoring_alerts" ADD COLUMN "resolved_automatically" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Before this, acted_by held whoever acted last: that is who acknowledged an acknowledged alert, who resolved a resolved one.
UPDATE "monitoring_alerts" SET "acknowledged_by" = "acted_by" WHERE "state" = 'acknowledged';--> statement-breakpoint
UPDATE "monitoring_alerts" SET "resolved_by" = "acted_by" WHERE "state" = 'resolved';

import { defineConfig } from "drizzle-kit";

// Migrations are generated from src/db/schema.ts with `npm run db:generate` and committed.
// The same SQL runs on the embedded PGlite and on Postgres.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema.ts",
  out: "./migrations",
});

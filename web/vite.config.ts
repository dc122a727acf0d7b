import path from "node:path";
import { defineConfig } from "vite";

// No React plugin: oxc compiles TSX with the automatic runtime; the app needs no Fast Refresh or Babel
// transforms, and every plugin is another dependency to install offline.
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  publicDir: false,
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: path.join(import.meta.dirname, "dist"),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: true,
  },
});

// ESLint for every TypeScript and JavaScript file we write: the server (src/), the dashboard (web/), the tests, the
// benchmarks and the scripts. `make lint` runs it with --max-warnings 0: a finding is fixed in the code, or the rule is
// turned off here with a one-line reason when the codebase does it on purpose.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      "web/dist/**",
      "dist/**",
      "data/**",
      "coverage/**",
      "bench/**/out/**",
      "bench/**/.work/**",
      "pipelines/**",
      // The test-only Python environment (make test creates it before the lint runs): other projects' JavaScript.
      ".venv-dev/**",
      ".test-results/**",
      // Generated from the routes by scripts/web-api-types.ts.
      "web/src/api/openapi.d.ts",
    ],
  },
  {
    files: ["**/*.{ts,tsx,mts,js,mjs}"],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: "error" },
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Validators match control characters on purpose: to refuse them in names, paths, headers and CSV cells.
      "no-control-regex": "off",
      // A leading underscore marks a parameter or binding kept for its position (Express's 4-argument error handler,
      // a destructured field left out on purpose).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The server and the dashboard are linted with type information too (about 40 s on one core): floating and
    // misused promises, needless assertions and `any` leaking out of JSON.parse are the bugs types alone miss.
    // Tests, benchmarks and scripts keep the syntactic set: they read response bodies as `any` on purpose.
    files: ["src/**/*.{ts,tsx}", "web/src/**/*.{ts,tsx}"],
    extends: [...tseslint.configs.recommendedTypeCheckedOnly],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `async` marks a method that an interface declares as returning a promise (a route handler, a queue's
      // start/close); a body that has nothing to await yet is fine.
      "@typescript-eslint/require-await": "off",
      // React ignores what an event handler returns: async onClick/onSubmit handlers are the dashboard's style.
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      // Re-throwing (or rejecting with) a caught error of unknown type passes it on unchanged, which is the intent.
      "@typescript-eslint/only-throw-error": ["error", { allowThrowingAny: true, allowThrowingUnknown: true }],
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    // Tests read JSON response bodies and schema documents untyped and assert on their fields.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // The dashboard runs in the browser; its tests drive a real browser and pass functions into the page.
    files: ["web/src/**/*.{ts,tsx}", "test/browser/**/*.ts", "test/unit/web-*.test.ts"],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ["web/src/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
    },
  },
);

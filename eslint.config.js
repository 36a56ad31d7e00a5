import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**", "docs/api/**"] },
  js.configs.recommended,
  // Plain-JavaScript build scripts run on Node; TypeScript files get these names from @types/node.
  { files: ["**/*.mjs"], languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } } },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-syntax": [
        "error",
        { selector: "ExportAllDeclaration", message: "List named re-exports instead of export *." },
        { selector: "ExportDefaultDeclaration", message: "No default exports." },
        { selector: "TSEnumDeclaration[const=true]", message: "Use string unions, not const enums." },
      ],
    },
  },
);

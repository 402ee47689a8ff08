// Lint and format as the Effect repo does: ESLint's and typescript-eslint's recommended rules, the
// Effect repo's additions, and @effect/eslint-plugin's `dprint` rule as the formatter (its wasm
// plugin ships in @dprint/typescript, so nothing is fetched at run time). Without type information,
// as the Effect repo lints: `tsc` checks types, this checks what types cannot.
//   npm run lint        check src, test, scripts
//   npm run lint:fix    apply the formatter and every other fixable rule
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import globals from "globals"
import tseslint from "typescript-eslint"

export default defineConfig(
  {
    ignores: [
      "**/node_modules",
      "**/dist",
      "**/build",
      "docs",
      ".e2e-tmp",
      "**/*.md"
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  effectEslint.configs.dprint,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: globals.node
    },
    linterOptions: {
      reportUnusedDisableDirectives: "error"
    },
    rules: {
      // The Effect repo's choices.
      "no-fallthrough": "off",
      "no-irregular-whitespace": "off",
      "object-shorthand": "error",
      "prefer-destructuring": "off",
      "sort-imports": "off",
      "no-unused-vars": "off",
      "require-yield": "off",
      "prefer-rest-params": "off",
      "prefer-spread": "off",
      // A `let` assigned after a finalizer that reads it is not a `const` (it may never be assigned).
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-empty-object-type": "off",
      "@typescript-eslint/no-unsafe-function-type": "off",
      "@typescript-eslint/no-wrapper-object-types": "off",
      "@typescript-eslint/consistent-type-imports": ["error", {
        fixStyle: "inline-type-imports",
        // `typeof import("…")` types a module loaded at run time from a path (the bench's workers).
        disallowTypeAnnotations: false
      }],
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrors: "none"
      }],
      "@typescript-eslint/ban-ts-comment": "off",
      "@typescript-eslint/no-array-constructor": "off",
      "@typescript-eslint/no-use-before-define": "off",
      "@typescript-eslint/no-namespace": "off",
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          // This code base orders its imports by hand; the Effect repo's settings sort them.
          "module.sortImportDeclarations": "maintain",
          "importDeclaration.sortNamedImports": "maintain",
          "exportDeclaration.sortNamedExports": "maintain"
        }
      }]
    }
  },
  {
    // CommonJS consumers and snippets (the package's CommonJS build is checked with them).
    files: ["**/*.cjs", "**/*.cjs.js"],
    rules: {
      "@typescript-eslint/no-require-imports": "off"
    }
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" }
  },
  {
    // The project's standards for the library's own code.
    files: ["src/**/*.ts"],
    rules: {
      "no-console": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/ban-ts-comment": "error",
      // `as const` stays allowed; a cast is not (JSON enters through `parseJsonBoundary` alone).
      "@typescript-eslint/consistent-type-assertions": ["error", { assertionStyle: "never" }],
      "no-restricted-syntax": ["error", {
        // A wire-sized array spread into arguments overflows the stack (the Effect repo's rule).
        selector: "CallExpression[callee.property.name='push'] > SpreadElement.arguments",
        message: "Do not use spread arguments in Array.push"
      }, {
        selector: "NewExpression[callee.name='Error']",
        message: "Fail with a Schema.TaggedError, not a bare Error"
      }]
    }
  }
)

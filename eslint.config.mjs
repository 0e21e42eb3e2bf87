// ESLint: typescript-eslint's recommended rules plus the project's own. Formatting is Prettier's
// (.prettierrc.json, `npm run format:check`), so no stylistic rule is repeated here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'test/generated/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      // No dead code; a leading underscore marks a parameter a signature needs but the body does not.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // A `let` a closure reads before its one assignment (a server's handler, a queue's cleanup) stays a `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Only src/platform/config/config.ts reads the environment: add a validated setting there and pass it in.',
        },
      ],
    },
  },
  {
    // The configuration readers: the gateway's, and the sandbox's own (the sandbox imports nothing from the gateway).
    files: ['src/platform/config/config.ts', 'src/sandbox/main.ts', 'test/**', 'bench/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Tests and benchmarks read ad-hoc JSON answers and assert on their shape field by field.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

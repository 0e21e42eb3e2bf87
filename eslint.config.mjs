// ESLint: typescript-eslint's recommended rules plus the project's own. Formatting is Prettier's
// (.prettierrc.json, `npm run format:check`), so no stylistic rule is repeated here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What the playground's script may use of the browser (ES2017's own built-ins come with ecmaVersion). */
const BROWSER_GLOBALS = ['window', 'document', 'location', 'fetch', 'Headers', 'WebSocket', 'sessionStorage', 'alert', 'console'];

export default tseslint.config(
  { ignores: ['dist/', 'examples/web/dist/', 'coverage/', 'test/generated/', 'test/clients/typed-app/gql/', 'node_modules/'] },
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
    // A function longer than a screen does more than one thing; the composition root only wires, so it is held shorter.
    files: ['src/**/*.ts', 'src/**/*.js'],
    rules: { 'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['src/app/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Data, not logic: a migration is a list of table definitions, the playground's examples a table of operations.
    files: ['src/platform/db/migrations/**', 'src/playground/examples.ts'],
    rules: { 'max-lines-per-function': 'off' },
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
    ignores: ['src/playground/client/**'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The playground's browser script: a classic script run after the UMD bundles whose globals it uses.
    files: ['src/playground/client/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      ecmaVersion: 2017,
      globals: {
        ...Object.fromEntries(BROWSER_GLOBALS.map((name) => [name, 'readonly'])),
        React: 'readonly',
        ReactDOM: 'readonly',
        GraphiQL: 'readonly',
        graphqlWs: 'readonly',
        EXAMPLES: 'readonly',
      },
    },
    // ES2017 has no `catch {}`: a catch that ignores its error still names it.
    rules: { strict: ['error', 'function'], '@typescript-eslint/no-unused-vars': ['error', { caughtErrors: 'none' }] },
  },
);

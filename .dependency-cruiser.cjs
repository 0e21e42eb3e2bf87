/**
 * The architecture's rules, checked by `npm run lint` (and so by `npm test` and CI). A rule's `comment` is what
 * the failure message says. There is no list of tolerated violations: any violation fails.
 */
const FEATURES = '(accounts|beneficiaries|payouts|refunds|data-tasks|identity|webhooks)';
/** A feature's GraphQL edge: its schema types, inputs, arguments, enums, mappers, resolvers and subscription streams. */
const EDGE = '\\.(resolver|type|input|args|enum|mapper|stream)\\.ts$';
const GRAPHQL_PACKAGES = '^node_modules/(graphql|type-graphql|@apollo/server|graphql-ws|graphql-jit)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'sandbox-is-a-separate-program',
      severity: 'error',
      comment:
        'The sandbox stands in for the provider: it imports nothing of the gateway, which meets it only over HTTP ' +
        '(src/embedded-sandbox.ts starts it in-process for `npm start`, src/cli/ is a client of both).',
      from: { path: '^src/sandbox/' },
      to: { path: '^src/', pathNot: '^src/sandbox/' },
    },
    {
      name: 'gateway-meets-sandbox-over-http',
      severity: 'error',
      comment: 'The gateway talks to the sandbox as to the real provider, over HTTP; only src/embedded-sandbox.ts and src/cli/ import it.',
      from: { path: '^src/', pathNot: ['^src/sandbox/', '^src/embedded-sandbox\\.ts$', '^src/cli/'] },
      to: { path: '^src/sandbox/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes load order matter and modules impossible to test alone; `import type` counts, as it ties the code all the same.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'platform-knows-no-feature',
      severity: 'error',
      comment: `src/platform/ serves every feature and knows none: what a feature brings (types, resolvers, jobs, handlers) is handed to it by src/app/.`,
      from: { path: '^src/platform/' },
      to: { path: [`^src/${FEATURES}/`, '^src/(app|playground|cli)/'] },
    },
    {
      name: 'features-meet-through-their-index',
      severity: 'error',
      comment: 'Another feature is used through its index.ts alone, so what a feature keeps to itself can change freely.',
      // $1 is the importer's own top folder (or top-level file): dependency-cruiser fills in the from-path's group.
      from: { path: '^src/([^/]+)' },
      to: { path: `^src/${FEATURES}/`, pathNot: ['^src/$1/', `^src/${FEATURES}/index\\.ts$`] },
    },
    {
      name: 'domain-knows-no-graphql',
      severity: 'error',
      comment:
        "A feature's services, stores, jobs and webhook handlers take plain inputs and return plain records: GraphQL, " +
        'its transports, the request context and the feature edges (types, resolvers, mappers, streams) are not theirs.',
      from: { path: `^src/${FEATURES}/`, pathNot: [EDGE, `^src/${FEATURES}/index\\.ts$`] },
      // topics.ts is the plain table of topic names a service publishes to; the rest of src/platform/live is transport.
      to: { path: [GRAPHQL_PACKAGES, EDGE, '^src/platform/(graphql|live)/'], pathNot: '^src/platform/live/topics\\.ts$' },
    },
    {
      name: 'plain-platform-knows-no-graphql',
      severity: 'error',
      comment:
        'Errors, provider clients, the database, the scheduler, configuration and status lifecycles are plain: only src/platform/graphql and src/platform/live speak GraphQL.',
      from: { path: '^src/platform/(errors|provider|db|scheduler|config|store|validation|lifecycle)/' },
      to: { path: [GRAPHQL_PACKAGES, '^src/platform/(graphql|live|http)/'] },
    },
    {
      name: 'not-to-dev-dependency',
      severity: 'error',
      comment: 'Production code may not need a devDependency: `npm ci --omit=dev` would not have it.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing (a missing file or an undeclared package).',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-test',
      severity: 'error',
      comment: 'Source and benchmarks do not import test code.',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|test/generated|test/clients/typed-app/gql)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // 'types' and 'typings' too: a types-only package (imported with `import type`) has no JavaScript entry.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['main', 'types', 'typings'],
      extensions: ['.ts', '.js', '.d.ts', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

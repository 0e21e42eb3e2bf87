/**
 * The architecture's rules, checked by `npm run lint` (and so by `npm test` and CI). A rule's `comment` is what
 * the failure message says. There is no list of tolerated violations: any violation fails.
 */
const HOMES = '(payouts|refunds|data-tasks)';

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
      name: 'datasources-know-nothing-of-resolvers',
      severity: 'error',
      comment: 'src/datasources/ are the provider clients: they know nothing of GraphQL resolvers, the schema, or the domain homes above them.',
      from: { path: '^src/datasources/' },
      to: { path: [`^src/(resolvers|schema|subscriptions|${HOMES})/`, '\\.resolver\\.ts$'] },
    },
    {
      name: 'homes-below-resolvers',
      severity: 'error',
      comment: `src/${HOMES}/ own their workflow and tables; resolvers stay thin and call them, never the other way round.`,
      from: { path: `^src/${HOMES}/` },
      to: { path: ['^src/resolvers/', '\\.resolver\\.ts$'] },
    },
    {
      name: 'subscriptions-know-no-resolvers',
      severity: 'error',
      comment: 'src/subscriptions/ reads through the domain homes (src/payouts/, src/refunds/, src/data-tasks/), not through resolvers.',
      from: { path: '^src/subscriptions/' },
      to: { path: ['^src/resolvers/', '\\.resolver\\.ts$'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes load order matter and modules impossible to test alone (cycles through `import type` vanish at run time).',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
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
    exclude: { path: '^(dist|test/generated)/' },
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

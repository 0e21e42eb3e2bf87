import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { VARIABLE_NAMES } from '../../src/platform/config/schema';

const ROOT = resolve(__dirname, '../..');
const DOCUMENTS = ['README.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((name) => name.endsWith('.md'));

/** Paths a document names: its relative links, and code spans that look like a file or folder of the repository. */
function namedPaths(text: string): string[] {
  const links = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/.test(target));
  const spans = [...text.matchAll(/`([^`\s]+)`/g)]
    .map((match) => match[1]!)
    .filter((span) => /^(\.\/)?(src|test|docs|bench|contract|\.ci)\/|^[\w.-]+\.(md|json|cjs|mjs|yml)$|^(src|test|docs|bench)\/[\w./-]+$/.test(span))
    .filter((span) => !/[<>*$]/.test(span));
  return [...links, ...spans];
}

describe('the documentation', () => {
  it.each(DOCUMENTS)('%s names only files that are in the repository', (document) => {
    const text = readFileSync(join(ROOT, document), 'utf8');
    const missing = namedPaths(text).filter((path) => !existsSync(resolve(dirname(join(ROOT, document)), path)) && !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
    // The first design document stayed outside the repository; the docs replace it.
    expect(text).not.toContain('DESIGN.md');
  });

  it('docs/configuration.md names every environment variable the configuration schema reads', () => {
    const names = new Set(VARIABLE_NAMES);
    // The list itself is checked: it holds the variables every gateway reads.
    expect(names.size).toBeGreaterThan(60);
    expect([...names]).toEqual(expect.arrayContaining(['PORT', 'HOST', 'PUBLIC_URL', 'STORE_URL', 'OTEL_EXPORTER_OTLP_HEADERS']));
    const documented = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    expect([...names].filter((name) => !new RegExp(`\\b${name}\\b`).test(documented))).toEqual([]);
  });

  it('keeps the README a front door: under 150 lines, the two commands first, a query, a curl, links to docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(150);
    expect(readme.indexOf('npm install && npm start')).toBeLessThan(readme.indexOf('## '));
    expect(readme).toContain('npm test');
    expect(readme).toContain('http://localhost:4000');
    expect(readme).toContain('john');
    expect(readme).toMatch(/```graphql\n/);
    expect(readme).toMatch(/curl .*localhost:4000\/graphql/);
    for (const page of [
      'api',
      'configuration',
      'operations',
      'security',
      'scaling',
      'sandbox',
      'provider-choices',
      'playground',
      'architecture',
      'development',
    ]) {
      expect(readme).toContain(`](docs/${page}.md)`);
    }
  });
});

/** Generated code and the made-up trees of the lint-rule fixtures name paths that are not this repository's. */
const NOT_OURS = new Set(['test/generated', 'test/clients/typed-app/gql', 'test/fixtures', 'node_modules']);

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (NOT_OURS.has(path) || NOT_OURS.has(entry.name)) return [];
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) ? [path] : [];
  });
}

/** Every comment of a file, found by TypeScript's parser, so a `//` in a string or a regular expression is none. */
function commentsOf(path: string, text = readFileSync(join(ROOT, path), 'utf8')): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, path.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const comments = new Map<number, string>();
  const visit = (node: ts.Node): void => {
    const ranges = [...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []), ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? [])];
    for (const range of ranges) comments.set(range.pos, text.slice(range.pos, range.end));
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...comments.values()];
}

/** Paths from the repository's root a comment names: `src/...`, `test/...`, `docs/...` and the other top folders. */
function pathsInComment(comment: string): string[] {
  return [...comment.matchAll(/(?<![\w./-])((?:src|test|docs|bench|contract|operations|\.ci)\/[\w./-]*[\w/])/g)].map((match) => match[1]!);
}

describe('source comments', () => {
  const named = ['src', 'bench', 'test']
    .flatMap(sourceFiles)
    .flatMap((file) => commentsOf(file).flatMap((comment) => pathsInComment(comment).map((path) => ({ file, path }))));

  it('name only paths that are in the repository', () => {
    // The search itself is checked: it finds paths that comments are known to name.
    expect(named.length).toBeGreaterThan(100);
    expect(named.map(({ path }) => path)).toEqual(expect.arrayContaining(['docs/identity.md', 'src/platform/db/migrations/']));
    expect(named.filter(({ path }) => !existsSync(join(ROOT, path))).map(({ file, path }) => `${file}: ${path}`)).toEqual([]);
  });

  it('are found by the parser, so a path in a string or a regular expression is not taken for one', () => {
    const text = "const url = 'http://x/src/nowhere.ts'; // see src/platform/db/\n/** src/accounts/index.ts */\nexport const re = /\\/\\/ src\\/gone/;";
    expect(commentsOf('probe.ts', text).flatMap(pathsInComment)).toEqual(['src/platform/db/', 'src/accounts/index.ts']);
    expect(pathsInComment('(src/db/migrations/). And `test/unit/x.test.ts`, docs/api.md#global-ids')).toEqual([
      'src/db/migrations/',
      'test/unit/x.test.ts',
      'docs/api.md',
    ]);
  });
});

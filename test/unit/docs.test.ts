import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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

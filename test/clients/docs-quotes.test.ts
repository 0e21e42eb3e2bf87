import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * docs/api.md's client recipes are the code these tests run: every code block there that follows a
 * `<!-- quote: <file>[#<region>] -->` line must be that file (or the lines between `// #region <region>` and
 * `// #endregion <region>` in it, indentation removed) character for character. A recipe changed here and not in the
 * doc, or the other way round, fails this test.
 */

const ROOT = join(__dirname, '..', '..');
const DOC = 'docs/api.md';

interface Quote {
  source: string;
  region?: string;
  block: string;
}

function quotes(markdown: string): Quote[] {
  const found = [...markdown.matchAll(/<!-- quote: ([^#\s]+)(?:#([\w-]+))? -->\n```\w*\n([\s\S]*?)```\n/g)];
  return found.map((match) => ({ source: match[1]!, region: match[2], block: match[3]! }));
}

function quoted(source: string, region: string | undefined): string {
  const text = readFileSync(join(ROOT, source), 'utf8');
  if (region === undefined) return text;
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === `// #region ${region}`);
  const end = lines.findIndex((line) => line.trim() === `// #endregion ${region}`);
  if (start < 0 || end < start) throw new Error(`${source} has no region ${region}`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((line) => line.trim() !== '').map((line) => line.length - line.trimStart().length));
  return `${body.map((line) => line.slice(indent)).join('\n')}\n`;
}

describe(`${DOC}'s client recipes`, () => {
  const all = quotes(readFileSync(join(ROOT, DOC), 'utf8'));

  it('quote the recipes the client tests use, and every one of them', () => {
    const sources = new Set(all.map((quote) => quote.source));
    const recipes = [
      'test/clients/recipes/apollo.ts',
      'test/clients/recipes/urql.ts',
      'test/clients/recipes/relay.ts',
      'test/clients/recipes/relay-incremental.ts',
      'relay.config.json',
    ];
    // The web app's code, run in Chromium by test/e2e/web-app.browser.test.ts.
    const webApp = ['config.ts', 'client.ts', 'SignIn.tsx', 'bank-sign-in.ts', 'operations.ts', 'Accounts.tsx', 'Payout.tsx'].map(
      (file) => `examples/web/src/${file}`,
    );
    for (const recipe of [...recipes, ...webApp]) {
      expect(sources).toContain(recipe);
    }
  });

  it.each(all.map((quote) => [`${quote.source}${quote.region ? `#${quote.region}` : ''}`, quote] as const))('show %s as the tests run it', (_name, quote) => {
    expect(quote.block).toBe(quoted(quote.source, quote.region));
  });
});

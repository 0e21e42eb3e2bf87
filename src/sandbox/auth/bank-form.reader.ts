/**
 * Reads the sandbox bank's sign-in page the way a browser would: the form's action and its hidden fields. The bank
 * page is scriptable on purpose, so tests, benchmarks and demos can sign in with a plain form POST.
 */
export function parseLoginForm(html: string, pageUrl: string): { action: string; fields: Record<string, string> } {
  const form = /<form\b[^>]*>/i.exec(html)?.[0];
  if (!form) throw new Error(`expected a <form> on the bank page, got:\n${html.slice(0, 500)}`);
  const action = new URL(decodeEntities(attribute(form, 'action') ?? ''), pageUrl).toString();
  const fields: Record<string, string> = {};
  for (const input of html.match(/<input\b[^>]*>/gi) ?? []) {
    const name = attribute(input, 'name');
    if (name && (attribute(input, 'type') ?? 'text').toLowerCase() === 'hidden') fields[decodeEntities(name)] = decodeEntities(attribute(input, 'value') ?? '');
  }
  return { action, fields };
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return match ? (match[2] ?? match[3] ?? match[4]) : undefined;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, code: string) => String.fromCodePoint(parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

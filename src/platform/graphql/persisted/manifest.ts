import { readFileSync } from 'node:fs';

/**
 * A trusted-documents manifest: document id -> document text. Read in the three formats app toolchains emit:
 * - GraphQL Code Generator's client preset (`persisted-documents.json`, keys `sha256:<hex>`), Relay
 *   (`persistedQueries.json`) and `npm run persist` (keys the bare hex): `{ "<id>": "<document>" }`;
 * - Apollo's persisted query manifest: `{ "format": "apollo-persisted-query-manifest", "operations": [{ "id", "body" }] }`.
 * A bad file stops start-up with a message naming it and what was wrong, like a bad variable.
 */
export function loadManifest(path: string): ReadonlyMap<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`PERSISTED_DOCUMENTS_MANIFEST ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`PERSISTED_DOCUMENTS_MANIFEST ${path} is not JSON; expected { "<document id>": "<document text>", ... }`);
  }
  return parseManifest(parsed, path);
}

export function parseManifest(parsed: unknown, name: string): ReadonlyMap<string, string> {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`PERSISTED_DOCUMENTS_MANIFEST ${name} must be a JSON object of document id -> document text`);
  }
  const record = parsed as Record<string, unknown>;
  const entries: [string, unknown][] =
    record.format === 'apollo-persisted-query-manifest' && Array.isArray(record.operations)
      ? record.operations.map((operation: { id?: unknown; body?: unknown }) => [String(operation?.id), operation?.body])
      : Object.entries(record);
  const documents = new Map<string, string>();
  for (const [id, document] of entries) {
    if (typeof document !== 'string' || document.trim() === '') {
      throw new Error(`PERSISTED_DOCUMENTS_MANIFEST ${name}: the entry ${JSON.stringify(id)} is not a document's text`);
    }
    documents.set(lookupKey(id), document);
  }
  return documents;
}

/** Requests name a hash as its bare lowercase hex (persisted-documents.ts), so a `sha256:<hex>` key is stored so too. */
function lookupKey(id: string): string {
  const hashed = /^sha256:([0-9a-fA-F]{64})$/.exec(id);
  return hashed ? hashed[1]!.toLowerCase() : id;
}

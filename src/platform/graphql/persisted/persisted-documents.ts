import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import {
  BadUserInputError,
  PersistedDocumentRequiredError,
  PersistedQueryHashMismatchError,
  PersistedQueryNotFoundError,
  PersistedQueryNotSupportedError,
} from '../../errors/gateway-errors';
import type { ApqStore } from './apq-store';

export type PersistedDocumentsMode = 'off' | 'allow' | 'only';

/** The fields of a GraphQL request (HTTP body or query string, WebSocket subscribe payload) this module reads. */
export interface DocumentRequest {
  query?: unknown;
  /** The GraphQL-over-HTTP persisted documents form: `sha256:<hex>` or a manifest's own id (Relay's). */
  documentId?: unknown;
  extensions?: unknown;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Turns a request that names a document by hash or id into one that carries its text, and enforces the mode:
 * - off: text only; a hash is answered PERSISTED_QUERY_NOT_SUPPORTED, so an APQ client goes back to sending text.
 * - allow: text; a manifest id or hash; Apollo's automatic persisted queries, registered in the cache backend
 *   (CACHE_URL), so every instance on one Redis knows a hash any of them was taught (src/platform/graphql/persisted/apq-store.ts:
 *   only documents that parse and validate, within a quota per principal).
 * - only: manifest documents only; text and unknown hashes are refused, APQ registration too (it would let a client
 *   teach the gateway any document). In development, the playground page of this gateway may still send text.
 */
export class PersistedDocuments {
  constructor(
    readonly mode: PersistedDocumentsMode,
    private readonly manifest: ReadonlyMap<string, string>,
    private readonly apq: ApqStore | undefined,
    private readonly development: boolean,
  ) {}

  /**
   * The document text to run, or undefined when the request named none (left to GraphQL's own "no query" error).
   * `fromPlayground`: the request came from this gateway's own page (see isOwnPage). `principalKey`: whose APQ
   * quota a registration spends (src/platform/http/principal-key.ts); without one, a registration runs but is not stored.
   */
  async resolve(request: DocumentRequest, fromPlayground: boolean, principalKey?: string): Promise<string | undefined> {
    const text = typeof request.query === 'string' && request.query !== '' ? request.query : undefined;
    const reference = referenceOf(request);
    if (!reference) {
      if (text !== undefined && this.mode === 'only' && !(this.development && fromPlayground)) {
        throw new PersistedDocumentRequiredError(
          'This gateway runs only the operations its apps were built with: send extensions.persistedQuery.sha256Hash or documentId instead of the document text.',
        );
      }
      return text;
    }
    if (this.mode === 'off') {
      throw new PersistedQueryNotSupportedError(
        'Persisted documents are not enabled on this gateway (PERSISTED_DOCUMENTS=off); send the document text as query.',
      );
    }
    if (text !== undefined) {
      if (reference.hash === undefined || sha256Hex(text) !== reference.hash) {
        throw new PersistedQueryHashMismatchError(
          reference.hash === undefined
            ? 'Send either documentId or the document text as query, not both.'
            : 'The query text does not hash to extensions.persistedQuery.sha256Hash (SHA-256 of the exact UTF-8 text, lowercase hex).',
        );
      }
      const known = this.manifest.get(reference.id) ?? this.manifest.get(reference.hash);
      if (known !== undefined) return known;
      if (this.mode === 'only') {
        throw new PersistedDocumentRequiredError('This document is not among the operations this gateway was built with, and this gateway runs no others.');
      }
      await this.apq?.register(reference.hash, text, principalKey);
      return text;
    }
    const stored = this.manifest.get(reference.id) ?? (reference.hash === undefined ? undefined : this.manifest.get(reference.hash));
    if (stored !== undefined) return stored;
    const learned = this.mode === 'allow' && reference.hash !== undefined ? await this.apq?.get(reference.hash) : undefined;
    if (learned !== undefined) return learned;
    throw new PersistedQueryNotFoundError(
      this.mode === 'allow'
        ? 'PersistedQueryNotFound: no document with this hash is known; send it again with the document text as query.'
        : 'PersistedQueryNotFound: no document with this id is among the operations this gateway was built with.',
    );
  }
}

interface DocumentReference {
  /** The key to look up in the manifest. */
  id: string;
  /** The SHA-256 the text must have, when the reference is a hash. */
  hash: string | undefined;
}

function referenceOf(request: DocumentRequest): DocumentReference | undefined {
  const persistedQuery = (request.extensions as { persistedQuery?: unknown } | undefined | null)?.persistedQuery;
  if (persistedQuery !== undefined && persistedQuery !== null) {
    const { version, sha256Hash } = persistedQuery as { version?: unknown; sha256Hash?: unknown };
    if (version !== 1) throw new PersistedQueryNotSupportedError("Only version 1 of extensions.persistedQuery (Apollo's protocol) is supported.");
    const hash = typeof sha256Hash === 'string' ? sha256Hash.toLowerCase() : '';
    if (!SHA256_HEX.test(hash))
      throw new BadUserInputError(
        'extensions.persistedQuery.sha256Hash must be 64 hexadecimal characters (SHA-256 of the document).',
        'extensions.persistedQuery.sha256Hash',
      );
    return { id: hash, hash };
  }
  if (request.documentId === undefined || request.documentId === null) return undefined;
  if (typeof request.documentId !== 'string' || request.documentId === '' || request.documentId.length > 200) {
    throw new BadUserInputError(
      'documentId must be a document id from the manifest: "sha256:<64 hex characters>" or the id your build tool wrote.',
      'documentId',
    );
  }
  const hashed = /^sha256:([0-9a-fA-F]{64})$/.exec(request.documentId);
  return hashed ? { id: hashed[1]!.toLowerCase(), hash: hashed[1]!.toLowerCase() } : { id: request.documentId, hash: undefined };
}

/**
 * A request from the gateway's own playground page: its Origin is the gateway itself. Browsers set Origin on
 * POSTs and WebSocket upgrades and pages cannot forge it; a non-browser client can, which is why this only
 * matters in development.
 */
export function isOwnPage(headers: Pick<IncomingHttpHeaders, 'origin' | 'host'>): boolean {
  const { origin, host } = headers;
  if (typeof origin !== 'string' || typeof host !== 'string') return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

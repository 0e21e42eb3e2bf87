/**
 * Global object ids (GraphQL Global Object Identification): one opaque string names one object of one type, so
 * `node(id:)` and a client's normalised cache (Relay, Apollo, graphcache) need nothing but the id.
 *
 * An id is base64url of `1:<tag>:<part>[:<part>…]`: `1` is the format's version, `<tag>` names the type (each feature
 * owns its tags), and the parts are what finds the object again (the provider's ids, URI-encoded so a part may hold
 * any character). Nothing secret goes in: only ids the caller was shown. Only the canonical spelling decodes, so one
 * object has exactly one id.
 */
const VERSION = '1';
/** Longer input is no id of ours, and decoding it would only cost time. */
const MAX_ID_LENGTH = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface DecodedGlobalId {
  tag: string;
  parts: string[];
}

export function toGlobalId(tag: string, ...parts: string[]): string {
  let text = `${VERSION}:${tag}`;
  for (const part of parts) text += `:${uriComponent(part)}`;
  // Tags are [a-z]+ and URI components are ASCII, so the latin1 bytes are the UTF-8 bytes, without the UTF-8
  // encoder's pass (a page of transactions encodes hundreds of ids).
  return Buffer.from(text, 'latin1').toString('base64url');
}

/** What encodeURIComponent leaves as it is. */
const URI_UNRESERVED = /^[\w.!~*'()-]*$/;

/** encodeURIComponent, skipped for the ids providers use (V8's encoder is a runtime call even when nothing changes). */
function uriComponent(part: string): string {
  return URI_UNRESERVED.test(part) ? part : encodeURIComponent(part);
}

/** What a global id names; undefined for anything that is not one (a provider's id, a typo, another version). */
export function fromGlobalId(id: string): DecodedGlobalId | undefined {
  if (id.length > MAX_ID_LENGTH || !BASE64URL.test(id)) return undefined;
  const [version, tag, ...encoded] = Buffer.from(id, 'base64url').toString('utf8').split(':');
  if (version !== VERSION || tag === undefined || !/^[a-z]+$/.test(tag) || encoded.length === 0) return undefined;
  let parts: string[];
  try {
    parts = encoded.map((part) => decodeURIComponent(part));
  } catch {
    return undefined;
  }
  return toGlobalId(tag, ...parts) === id ? { tag, parts } : undefined;
}

/**
 * The parts of `id` when it is a global id with this tag and this many parts; undefined otherwise. For arguments
 * that take both today's provider ids and global ids: anything that is not such a global id is a provider id.
 */
export function globalIdParts(id: string, tag: string, arity: number): string[] | undefined {
  const decoded = fromGlobalId(id);
  return decoded && decoded.tag === tag && decoded.parts.length === arity ? decoded.parts : undefined;
}

/**
 * For an argument that names one object: the provider's id as given, or the one a global id of `tag` carries
 * (its last part). A global id of another type is returned as it is, so it finds nothing, as an unknown id would.
 */
export function providerIdOf(id: string, tag: string, arity = 1): string {
  return globalIdParts(id, tag, arity)?.at(-1) ?? id;
}

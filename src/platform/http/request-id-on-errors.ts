/**
 * Apollo answers some requests itself before any plugin runs (a CSRF refusal, a batch, an empty body, `variables`
 * as a string, an unsupported method), so the request-id plugin never sees those errors. They carry no `data`, so
 * adding the id to the serialized answer cannot touch a result (and the decimals it keeps as written).
 */
export function withRequestIdOnErrors(body: string, requestId: string): string {
  // An answer with data is left as it is (below); Apollo writes `errors` before `data`, so one that starts with
  // data is known without searching the whole (often large) text for "errors".
  if (body.startsWith('{"data"') || !body.includes('"errors"') || body.includes('"requestId"')) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || 'data' in parsed) return body;
  const { errors } = parsed as { errors?: unknown };
  if (!Array.isArray(errors)) return body;
  const tagged = errors.map((error: { extensions?: Record<string, unknown> }) => ({ ...error, extensions: { ...error.extensions, requestId } }));
  return JSON.stringify({ ...parsed, errors: tagged });
}

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { sendGraphQLRefusal } from '../graphql/refusals';
import type { PrincipalLookup } from '../graphql/http-handler';
import { DirectWrites, TERMINAL, writeChunk, type HttpStreams, type StreamedResult } from './http-streams';

/** What the gateway answers a subscription with: Apollo's multipart subscription protocol, parts separated by `--graphql`. */
export const MULTIPART_SUBSCRIPTION_CONTENT_TYPE = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"';

/** What it answers an operation using @defer or @stream with: each payload a part, as Apollo Server and Router write them. */
export const MULTIPART_INCREMENTAL_CONTENT_TYPE = 'multipart/mixed;boundary="graphql";deferSpec=20220824';

/** An operation read from a POST or GET to /graphql, its document already resolved (persisted documents, APQ). */
export interface MultipartRequest {
  query: string;
  operationName?: string | null;
  variables?: Readonly<Record<string, unknown>> | null;
  /** A subscription's events (each part `{"payload": …}`), or a query's or mutation's payloads (each part the payload). */
  kind: 'subscription' | 'incremental';
}

/** Apollo Server's csrfPrevention, word for word: what a plain form or `<img>` can send is refused on /graphql. */
const PREFLIGHT_HEADERS = ['x-apollo-operation-name', 'apollo-require-preflight'];
const NON_PREFLIGHTED_CONTENT_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];
export const CSRF_MESSAGE =
  `This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header ` +
  `(with a type that is not one of ${NON_PREFLIGHTED_CONTENT_TYPES.join(', ')}) or provide a non-empty value for one of the following ` +
  `headers: ${PREFLIGHT_HEADERS.join(', ')}\n`;

/**
 * True when a browser could have sent this request without a CORS preflight, under Apollo's rule: no content type,
 * or one a form can send, and no non-empty preflight-forcing header. A content type that does not parse passes, as
 * in Apollo, since a browser sends none such without a preflight.
 */
export function couldSkipPreflight(headers: IncomingHttpHeaders): boolean {
  const contentType = headers['content-type'];
  if (contentType !== undefined) {
    const essence = /^[\t\n\r ]*([!#$%&'*+.^_`|~\w-]+\/[!#$%&'*+.^_`|~\w-]+)[\t\n\r ]*(;|$)/.exec(contentType)?.[1]?.toLowerCase();
    if (essence === undefined || !NON_PREFLIGHTED_CONTENT_TYPES.includes(essence)) return false;
  }
  return !PREFLIGHT_HEADERS.some((name) => {
    const value = headers[name];
    return value !== undefined && value.length > 0;
  });
}

const BOUNDARY = '\r\n--graphql';
const PART_HEAD = '\r\ncontent-type: application/json; charset=utf-8\r\n\r\n';

/** One part and the boundary after it. */
function part(json: string): string {
  return `${PART_HEAD}${json}${BOUNDARY}`;
}

/** The part carrying one result, given its JSON. */
function resultPart(json: string): string {
  return part(`{"payload":${json}}`);
}

/**
 * The last part of a stream its principal may no longer read: a transport error for a subscription (Apollo's
 * protocol), and for a query's payloads the errors as the final payload.
 */
function terminalPart(result: StreamedResult, subscription: boolean): string {
  return part(JSON.stringify(subscription ? { payload: null, errors: result.errors } : { errors: result.errors, hasNext: false }));
}

/**
 * Apollo's multipart HTTP subscriptions (Apollo Client, Apollo iOS and Kotlin, Apollo Router's protocol) on
 * /graphql, for a subscription whose request says `Accept: multipart/mixed;subscriptionSpec="1.0"`: each result is
 * a part `{"payload": <result>}`, `{}` is a heartbeat every STREAM_HEARTBEAT_MS, and a stream ended because its
 * principal may no longer read it ends with `{"payload": null, "errors": [...]}`. Every part is followed by its
 * boundary at once, so a client's parser hands it on without waiting for the next one. An operation using @defer or
 * @stream whose request accepts `multipart/mixed` (deferSpec=20220824) is answered the same way, each payload a part
 * of its own and no heartbeat. The rules are HttpStreams'.
 */
export class MultipartSubscriptions {
  constructor(private readonly streams: HttpStreams) {}

  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    started: number,
    lookup: PrincipalLookup,
    request: MultipartRequest,
  ): Promise<void> {
    // The request is streamed here, not by Apollo: its CSRF prevention is applied first, as Apollo would.
    if (couldSkipPreflight(req.headers)) {
      sendGraphQLRefusal(req, res, 400, { message: CSRF_MESSAGE, extensions: { code: 'BAD_USER_INPUT' } }, requestId);
      return;
    }
    if (this.streams.refuseForeignOrigin(req, res, requestId)) return;
    const subscription = request.kind === 'subscription';
    const contentType = subscription ? MULTIPART_SUBSCRIPTION_CONTENT_TYPE : MULTIPART_INCREMENTAL_CONTENT_TYPE;
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache, no-store', connection: 'keep-alive' });
    res.write(BOUNDARY);
    // A query's payloads come within its deadline; a heartbeat part would read to a defer client as a payload.
    const heartbeat = subscription ? setInterval(() => res.writable && res.write(part('{}')), this.streams.heartbeatMs) : undefined;
    const framing = subscription ? resultPart : part;
    const direct = new DirectWrites(res, framing);
    const results = this.streams.run({
      req,
      res,
      requestId,
      started,
      transport: 'multipart',
      lookup,
      document: { query: request.query },
      query: request.query,
      operationName: request.operationName,
      variables: request.variables,
      mutationsAllowed: req.method === 'POST',
      direct,
    });
    const stop = (): void => void results.return(undefined);
    res.once('close', stop);
    try {
      for await (const result of results) {
        if (!res.writable) break;
        const written = writeChunk(res, result[TERMINAL] ? terminalPart(result, subscription) : framing(JSON.stringify(result)));
        direct.wrote();
        await written;
      }
    } finally {
      if (heartbeat) clearInterval(heartbeat);
      res.off('close', stop);
      // The closing boundary: the client sees the subscription complete.
      res.end(res.writable ? '--\r\n' : undefined);
    }
  }
}

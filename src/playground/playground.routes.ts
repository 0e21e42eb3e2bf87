import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { varyAlsoBy } from '../platform/http/cors';
import { PlaygroundAssets } from './playground-assets';

/** Who the page is signed in as, for its banner; `reason` says why a session cookie was not accepted. */
export type PlaygroundSession = { signedIn: true; userId: string; holderName?: string } | { signedIn: false; reason?: string };

export interface PlaygroundOptions {
  sandbox: boolean;
  /** App identity: requests carry the app's access token, typed into a field of the page, instead of a bank session. */
  appIdentity?: boolean;
  /** The browser's own sign-in, read from the session cookie alone (a merchant key typed into the page is not one). */
  session(req: IncomingMessage): Promise<PlaygroundSession>;
  /** On a sandbox provider: a seeded payment's id for the Payment tab, asked once, on the first visit. */
  seededPaymentId?: () => Promise<string | undefined>;
}

const NONCE_PLACEHOLDER = '__STYLE_NONCE__';

/**
 * The self-hosted GraphiQL: the page at GET / and at GET /graphql for browsers, its assets under
 * /playground/assets/, and GET /playground/session for its banner. Everything comes from installed packages;
 * nothing is fetched from a CDN.
 */
export class Playground {
  // Read on the first visit, not at start: GraphiQL's files are large, and an API-only instance never serves them.
  private loaded: Promise<{ assets: PlaygroundAssets; page: string }> | undefined;

  constructor(private readonly options: PlaygroundOptions) {}

  private load(): Promise<{ assets: PlaygroundAssets; page: string }> {
    this.loaded ??= (async () => {
      const appIdentity = this.options.appIdentity ?? false;
      const paymentId = await this.options.seededPaymentId?.();
      const assets = new PlaygroundAssets(appIdentity, { paymentId });
      return { assets, page: this.render(assets, this.options.sandbox, appIdentity) };
    })();
    return this.loaded;
  }

  /** Serves the request when it is the playground's; false otherwise. */
  async handle(path: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (path === '/' || (path === '/graphql' && wantsHtml(req))) {
      await this.sendPage(req, res);
      return true;
    }
    if (path === '/playground/session') {
      const body = Buffer.from(JSON.stringify(await this.options.session(req)));
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': body.length,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return true;
    }
    if (!path.startsWith('/playground/assets/')) return false;
    const { assets } = await this.load();
    const asset = assets.find(path);
    if (!asset) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
      res.end('not found');
      return true;
    }
    const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    const body = gzip ? await assets.gzipped(asset) : asset.body;
    res.writeHead(200, {
      'content-type': asset.contentType,
      'content-length': body.length,
      // The URL carries the content hash, so the file behind it never changes.
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      'cross-origin-resource-policy': 'same-origin',
      vary: varyAlsoBy(res, 'accept-encoding'),
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }

  private async sendPage(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A fresh nonce per page: GraphiQL's menus add <style> elements at run time, which playground.js marks with it.
    const nonce = randomBytes(16).toString('base64');
    const page = Buffer.from((await this.load()).page.replace(NONCE_PLACEHOLDER, nonce));
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': page.length,
      'content-security-policy': contentSecurityPolicy(req, nonce),
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      vary: varyAlsoBy(res, 'accept'),
    });
    res.end(req.method === 'HEAD' ? undefined : page);
  }

  private render(assets: PlaygroundAssets, sandbox: boolean, appIdentity: boolean): string {
    const bank = sandbox ? 'the sandbox bank' : 'your bank';
    // App identity makes no sessions: the page says what authenticates it instead of offering a sign-in.
    const identity = appIdentity
      ? `<span id="identity-mode" role="note">App identity: every request carries your app's access token; Connect adds ${bank} to its user.</span>
<label class="merchant-key">Access token <input id="access-token" type="password" autocomplete="off" spellcheck="false" placeholder="your identity provider's access token (JWT)"></label>
<button id="connect-bank" type="button">Connect ${bank}</button>`
      : `<span id="who" role="status">Checking who is signed in…</span>
<a id="sign-in" href="/auth/login?returnTo=/graphql" hidden>Sign in with ${bank}</a>
<button id="sign-out" type="button" hidden>Sign out</button>`;
    const script = (name: string) => `<script src="${assets.url(name)}"></script>`;
    const style = (name: string) => `<link rel="stylesheet" href="${assets.url(name)}">`;
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bankgraph playground</title>
<meta name="bankgraph-style-nonce" content="${NONCE_PLACEHOLDER}">
<link rel="icon" href="data:,">
${style('graphiql.min.css')}
${style('playground.css')}
</head>
<body>
<header class="bankgraph-bar">
<strong>bankgraph</strong>
${identity}
<label class="merchant-key">Merchant key <input id="merchant-key" type="password" autocomplete="off" spellcheck="false" placeholder="for payment and refund operations"></label>
<span id="run-note" role="status" hidden></span>
<span id="payload-note" role="status" hidden></span>
</header>
<div id="graphiql">Loading the playground…</div>
${script('react.production.min.js')}
${script('react-dom.production.min.js')}
${script('graphql-ws.min.js')}
${script('graphiql.min.js')}
${script('playground.js')}
</body>
</html>
`;
  }
}

/**
 * Scripts, styles, fonts and images only from this origin (GraphiQL's fonts and icons are data: URLs inside its
 * stylesheet), plus style elements carrying this page's nonce; no inline script; network access only to this
 * origin, over HTTP and WebSocket. The WebSocket origin is spelt out because older browsers do not let 'self'
 * cover ws: and wss:.
 */
export function contentSecurityPolicy(req: IncomingMessage, styleNonce: string): string {
  const host = req.headers.host ?? '';
  // The Host header is reflected into the policy, so it must look like a host and nothing else.
  const socket = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${styleNonce}'`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${socket}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** A browser navigating to /graphql asks for HTML first; GraphQL clients ask for JSON. */
function wantsHtml(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? '';
  return /\btext\/html\b/i.test(accept) && !/application\/(graphql-response\+)?json/i.test(accept.split(',')[0] ?? '');
}

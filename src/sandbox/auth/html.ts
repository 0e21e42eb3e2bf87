import type { ServerResponse } from 'node:http';
import { sendHtml } from '../http/respond';

/** Everything echoed into the page (state, client_id, usernames...) goes through this; the page runs no script. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f3f5f8;margin:0}
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{margin-top:0;color:#0b3d91}label{display:block;margin:1rem 0 .25rem}input{width:100%;padding:.5rem;box-sizing:border-box}
button{margin-top:1.25rem;padding:.6rem 1rem}.error{color:#b00020}.hint{color:#555;font-size:.9rem}`;

/**
 * A page of the mock bank. Framing and scripts are refused, since a sign-in page is what clickjacking targets. It
 * sets no form-action: browsers apply it to every redirect after the form post, and the client's callback may send
 * the browser on to an app on another origin (a returnTo the client allows), which this bank cannot know.
 */
export function sendBankPage(res: ServerResponse, status: number, title: string, body: string): void {
  res.setHeader('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('cache-control', 'no-store');
  sendHtml(
    res,
    status,
    `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Mock Bank</title><style>${STYLE}</style></head>
<body><main>
<h1>Mock Bank</h1>
${body}
</main></body>
</html>
`,
  );
}

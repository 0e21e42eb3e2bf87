import type { ServerResponse } from 'node:http';
import { sendText } from '../platform/http/respond';

/**
 * What a browser sees when a sign-in does not end in a session (cancelled at the bank, refused, expired): a page
 * that says why, with a link back, instead of raw JSON. `back` is a same-origin path checked at /auth/login.
 */
export function sendSignInPage(res: ServerResponse, status: number, title: string, message: string, back: string): void {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;line-height:1.5}a{font-weight:600}</style>
</head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><a href="${escapeHtml(back)}">Go back</a></p></body></html>`;
  sendText(res, status, html, 'text/html; charset=utf-8', {
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

import type { ServerResponse } from 'node:http';
import type { SandboxContext } from '../context';
import type { Handler } from '../http/router';
import { AUTHORIZE_PARAMS, checkAuthorizeRequest, redirectLocation, type AuthorizeCheck, type AuthorizeRequest } from './authorize-request';
import type { Grants } from './grants';
import { MOCK_BANKS, MOCK_PROVIDER_ID } from '../fixtures/users';
import { escapeHtml, sendBankPage } from './html';

/**
 * The bank's authentication page, `GET {auth_url}/?response_type=code&...`, and its form post. The form carries the
 * authorization request in hidden fields, and every one of them is checked again on the post, since a browser can
 * send anything.
 */
export function bankPageRoutes(context: SandboxContext, grants: Grants): { show: Handler; submit: Handler } {
  return {
    show(req, res) {
      const check = checkAuthorizeRequest(req.query, context.client);
      if (check.kind !== 'ok') return refuse(res, check);
      sendLoginForm(res, 200, check.request, context, { username: '', bank: MOCK_PROVIDER_ID, message: undefined });
    },

    submit(req, res) {
      const form = req.form();
      const authorizeParams = new URLSearchParams();
      for (const name of AUTHORIZE_PARAMS) for (const value of form.getAll(name)) authorizeParams.append(name, value);
      const check = checkAuthorizeRequest(authorizeParams, context.client);
      if (check.kind !== 'ok') return refuse(res, check);
      const request = check.request;
      if (form.get('action') === 'deny') {
        return redirect(res, request.redirectUri, { error: 'access_denied', error_description: 'the user cancelled the sign-in', state: request.state });
      }
      const username = (form.get('username') ?? '').trim();
      const password = form.get('password') ?? '';
      // The bank picker; a form without it (older clients, scripts) signs in at the first bank.
      const bank = form.get('bank') ?? MOCK_PROVIDER_ID;
      if (!MOCK_BANKS.some((known) => known.providerId === bank)) {
        return sendLoginForm(res, 400, request, context, { username, bank: MOCK_PROVIDER_ID, message: 'Choose one of the listed banks.' });
      }
      const user = context.fixtures.users.find(
        (candidate) => candidate.username === username && candidate.password === password && candidate.providerId === bank,
      );
      if (!user) {
        const message = username === '' || password === '' ? 'Enter your username and password.' : 'The username or password is wrong.';
        return sendLoginForm(res, 401, request, context, { username, bank, message });
      }
      const code = grants.issueCode({ clientId: request.clientId, redirectUri: request.redirectUri, userId: user.id, codeChallenge: request.codeChallenge });
      redirect(res, request.redirectUri, { code, state: request.state });
    },
  };
}

function refuse(res: ServerResponse, check: Exclude<AuthorizeCheck, { kind: 'ok' }>): void {
  if (check.kind === 'redirect') {
    return redirect(res, check.redirectUri, { error: check.error, error_description: check.description, state: check.state });
  }
  sendBankPage(
    res,
    400,
    'Sign-in request refused',
    `<p class="error" role="alert">This sign-in request cannot be completed: ${escapeHtml(check.message)}</p>
<p>Go back to the application that sent you here and start again.</p>`,
  );
}

function redirect(res: ServerResponse, redirectUri: string, params: Record<string, string | undefined>): void {
  res.writeHead(302, { location: redirectLocation(redirectUri, params), 'cache-control': 'no-store', 'content-length': 0 });
  res.end();
}

function sendLoginForm(
  res: ServerResponse,
  status: number,
  request: AuthorizeRequest,
  context: SandboxContext,
  shown: { username: string; bank: string; message: string | undefined },
): void {
  const hidden: [string, string | undefined][] = [
    ['response_type', 'code'],
    ['client_id', request.clientId],
    ['redirect_uri', request.redirectUri],
    ['scope', request.scope],
    ['state', request.state],
    ['code_challenge', request.codeChallenge],
    ['code_challenge_method', request.codeChallengeMethod],
  ];
  const hiddenInputs = hidden
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
  const named = context.fixtures.users.filter((user) => !/^user\d+$/.test(user.username));
  const logins = [...new Set(named.map((user) => `${user.username} / ${user.password}`))].map(escapeHtml).join(', ');
  const banks = MOCK_BANKS.map(
    (bank) => `<option value="${escapeHtml(bank.providerId)}"${bank.providerId === shown.bank ? ' selected' : ''}>${escapeHtml(bank.name)}</option>`,
  ).join('');
  sendBankPage(
    res,
    status,
    'Sign in',
    `<p><strong>${escapeHtml(request.clientId)}</strong> asks to read your account information${request.scope ? ` (${escapeHtml(request.scope)})` : ''}.</p>
${shown.message ? `<p class="error" role="alert">${escapeHtml(shown.message)}</p>` : ''}
<form method="post" action="/">
${hiddenInputs}
<label for="bank">Bank</label><select id="bank" name="bank">${banks}</select>
<label for="username">Username</label><input id="username" name="username" autocomplete="username" value="${escapeHtml(shown.username)}" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" name="action" value="allow">Sign in and allow</button>
<button type="submit" name="action" value="deny" formnovalidate>Cancel</button>
</form>
<p class="hint">Sandbox test logins: ${logins} (sam banks with both; cara and cora have cards only; nora has nothing to share; ada and ben share a joint account).</p>`,
  );
}

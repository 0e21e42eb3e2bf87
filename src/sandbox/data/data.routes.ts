import type { RouteModule, SandboxContext } from '../context';
import type { FixtureAccount, FixtureCard, FixtureUser } from '../fixtures/types';
import type { SandboxRequest } from '../http/request';
import { OAuthStyleError, sendJson, sendProviderJson, sendProviderResults } from '../http/respond';
import type { Handler } from '../http/router';
import { dataApiUser } from './data-auth';
import { dateRange, deliveryMode, inRange } from './query';
import { DataTasks } from './tasks';

/** When the bank last refreshed what it knows of its customers (fixed, as the seeded data is). */
const INFO_UPDATED = '2026-04-01T06:00:00Z';

/** What one data call returns, computed when the request arrives (async tasks hand back exactly this later). */
type Resolve = (user: FixtureUser, req: SandboxRequest) => readonly unknown[];

/**
 * The account-data API under {data_url}/data/v1: accounts, cards, their balances, transactions and pending
 * transactions, each synchronous or asynchronous (task + webhook + results), and the results endpoint.
 * Amounts keep their decimal digits on the wire (sendProviderJson), as a real bank's "100.10" does.
 */
export const registerDataRoutes: RouteModule = ({ provider }, context) => {
  const tasks = new DataTasks(context);
  const endpoint = (resolve: Resolve): Handler => dataEndpoint(context, tasks, resolve);
  const transactions = (find: (user: FixtureUser, id: string) => FixtureAccount | FixtureCard, which: 'transactions' | 'pendingTransactions') =>
    endpoint((user, req) => {
      const item = find(user, req.params.accountId!);
      const range = dateRange(req.query);
      // Without a range, the whole history as it is (its frozen transactions' texts are kept, see respond.ts).
      if (range.from === undefined && range.to === undefined) return item[which];
      return item[which].filter((transaction) => inRange(transaction.timestamp, range));
    });

  provider
    // Who signed in, as TrueLayer's info endpoint answers it (docs/provider-choices.md, "Account data").
    .add('GET', '/data/v1/info', (req, res) => {
      const { user } = dataApiUser(req, context, 'info');
      sendProviderResults(res, 200, [{ full_name: user.name, update_timestamp: INFO_UPDATED }]);
    })
    .add('GET', '/data/v1/accounts', endpoint((user) => user.accounts.map((item) => item.account)))
    .add('GET', '/data/v1/accounts/:accountId/balance', endpoint((user, req) => [findAccount(user, req.params.accountId!).balance]))
    .add('GET', '/data/v1/accounts/:accountId/transactions', transactions(findAccount, 'transactions'))
    .add('GET', '/data/v1/accounts/:accountId/transactions/pending', transactions(findAccount, 'pendingTransactions'))
    .add('GET', '/data/v1/cards', endpoint((user) => user.cards.map((item) => item.card)))
    .add('GET', '/data/v1/cards/:accountId/balance', endpoint((user, req) => [findCard(user, req.params.accountId!).balance]))
    .add('GET', '/data/v1/cards/:accountId/transactions', transactions(findCard, 'transactions'))
    .add('GET', '/data/v1/cards/:accountId/transactions/pending', transactions(findCard, 'pendingTransactions'))
    .add('GET', '/data/v1/results/:taskId', (req, res) => {
      const { token } = dataApiUser(req, context);
      const task = tasks.find(req.params.taskId!, token.clientId, token.userId!);
      if (!task) throw new OAuthStyleError(404, 'task_not_found', `no task ${req.params.taskId} was created with this user's consent`);
      if (task.status !== 'succeeded') {
        throw new OAuthStyleError(409, 'task_not_ready', `task ${task.id} is ${task.status}; fetch its results after the webhook arrives`);
      }
      sendProviderJson(res, 200, task.payload);
    });
};

function dataEndpoint(context: SandboxContext, tasks: DataTasks, resolve: Resolve): Handler {
  return (req, res) => {
    const { token, user } = dataApiUser(req, context);
    const mode = deliveryMode(req.query);
    const results = resolve(user, req);
    if (mode.kind === 'sync') return sendProviderResults(res, 200, results);
    const payload = { results };
    const { task, resultsUri } = tasks.create({
      clientId: token.clientId,
      userId: user.id,
      // Opaque and stable for one consent: the same across refreshes, different for a new sign-in.
      credentialsId: token.sessionId ?? user.id,
      payload,
      requestUri: `${context.origin()}${req.path}`,
      webhookUri: mode.webhookUri,
    });
    sendJson(res, 202, { results_uri: resultsUri, status: task.status, task_id: task.id });
  };
}

/** Unknown ids and other users' accounts are the same 404: nothing says the account exists. */
function findAccount(user: FixtureUser, id: string): FixtureAccount {
  const account = user.accounts.find((item) => item.account.account_id === id);
  if (!account) throw new OAuthStyleError(404, 'account_not_found', `no account ${id} among this user's accounts`);
  return account;
}

function findCard(user: FixtureUser, id: string): FixtureCard {
  const card = user.cards.find((item) => item.card.account_id === id);
  if (!card) throw new OAuthStyleError(404, 'card_not_found', `no card ${id} among this user's cards`);
  return card;
}

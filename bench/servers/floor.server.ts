import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import type { ProviderAccount, ProviderCard } from '../../src/platform/provider/provider-types';
import { listenOnLoopback } from '../lib/loopback-server';
import { runChild } from './child.runtime';

export interface FloorInit {
  dataUrl: string;
  /** The provider access token of the bench's user (as the naive gateway's clients send it). */
  accessToken: string;
  /** bankgraph's answer to the executed query, byte for byte. */
  body: string;
  contentType: string;
}

/**
 * Scenario 7's floor: the least any gateway must do to answer the executed nested query. For every request it makes
 * the query's provider calls through undici (the accounts and the cards, then every account's and card's balance and
 * transactions at once), reads every answer whole and JSON.parses it, and answers bankgraph's bytes. No GraphQL, no
 * sessions, no mapping, no decimals kept, no metrics: what a gateway spends beyond this is what its GraphQL layer
 * costs. A provider answer other than 200 fails the request, so a floor that stopped calling would be seen.
 */
runChild(async (init) => {
  const { dataUrl, accessToken, body, contentType } = init as FloorInit;
  const bytes = Buffer.from(body, 'utf8');
  const dispatcher = new Agent();
  const headers = { authorization: `Bearer ${accessToken}` };

  async function results<T>(path: string): Promise<T[]> {
    const answer = await request(`${dataUrl}${path}`, { dispatcher, headers });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`the provider answered ${answer.statusCode} for ${path}: ${text.slice(0, 200)}`);
    return (JSON.parse(text) as { results: T[] }).results;
  }

  const ownerPaths = (owner: 'accounts' | 'cards', id: string): string[] => [
    `/data/v1/${owner}/${encodeURIComponent(id)}/balance`,
    `/data/v1/${owner}/${encodeURIComponent(id)}/transactions`,
  ];

  async function callTheProvider(): Promise<void> {
    const [accounts, cards] = await Promise.all([results<ProviderAccount>('/data/v1/accounts'), results<ProviderCard>('/data/v1/cards')]);
    const paths = [
      ...accounts.flatMap((account) => ownerPaths('accounts', account.account_id)),
      ...cards.flatMap((card) => ownerPaths('cards', card.account_id)),
    ];
    await Promise.all(paths.map((path) => results<unknown>(path)));
  }

  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      callTheProvider().then(
        () => {
          res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length });
          res.end(bytes);
        },
        (error: unknown) => {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(error instanceof Error ? error.message : String(error));
        },
      );
    });
  });
  const { url, close } = await listenOnLoopback(server);
  return {
    info: { url },
    close: async () => {
      await close();
      await dispatcher.close();
    },
  };
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { dataOf, fixtures, paymentsIn } from '../helpers/money';
import { startStack, type GraphQLResult, type Stack } from '../helpers/stack';
import { MyAccountsDocument, PaymentWithRefundsDocument } from './typed-app/gql/graphql';

/*
 * An app's typed operations as docs/api.md ("Typed operations") sets them up: GraphQL Code Generator's client preset
 * run on ./typed-app/codegen.ts by `npm run codegen`, its persisted-documents.json handed to a gateway that runs
 * nothing else, and each generated document sent by the hash it carries, as the app's client sends it.
 */

const MANIFEST = join(__dirname, 'typed-app', 'gql', 'persisted-documents.json');

type Persisted<R, V> = TypedDocumentNode<R, V> & { __meta__?: { hash?: string } };

/** The hash the client preset put on a generated document, which its app sends as documentId. */
const hashOf = (document: object): string | undefined => (document as Persisted<unknown, unknown>).__meta__?.hash;

async function run<R, V>(stack: Stack, document: TypedDocumentNode<R, V>, variables: V, token: string): Promise<R> {
  const response = await fetch(`${stack.gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ documentId: hashOf(document), variables }),
  });
  return dataOf({ status: response.status, ...((await response.json()) as object) } as GraphQLResult<R>);
}

describe('typed operations from the client preset, with PERSISTED_DOCUMENTS=only', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { PERSISTED_DOCUMENTS: 'only', PERSISTED_DOCUMENTS_MANIFEST: MANIFEST } });
  });
  afterAll(async () => stack?.close());

  it('loads the manifest as codegen wrote it, keyed `sha256:<hex>`', () => {
    const keys = Object.keys(JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>);
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(keys).toEqual(expect.arrayContaining([hashOf(MyAccountsDocument), hashOf(PaymentWithRefundsDocument)]));
  });

  it("runs a signed-in user's generated query by its documentId, with typed results", async () => {
    const accounts = await run(stack, MyAccountsDocument, { first: 2 }, await stack.signIn());
    expect(accounts.viewer.accounts.length).toBeGreaterThan(0);
    const [first] = accounts.viewer.accounts;
    expect(typeof first!.displayName).toBe('string');
    expect(first!.transactions.nodes.length).toBeLessThanOrEqual(2);
  });

  it("runs a merchant's generated query by its documentId", async () => {
    const [settled] = paymentsIn(await fixtures(stack), 'settled');
    const answer = await run(stack, PaymentWithRefundsDocument, { id: settled!.id }, stack.merchantKey);
    expect(answer.payment).toMatchObject({ refundedAmountInMinor: expect.any(Number), refunds: expect.any(Array) });
  });

  it('still refuses a document the app was not built with', async () => {
    const response = await fetch(`${stack.gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.merchantKey}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('PERSISTED_DOCUMENT_REQUIRED');
  });
});

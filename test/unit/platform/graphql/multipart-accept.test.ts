import { acceptsMultipartIncremental, acceptsMultipartSubscription } from '../../../../src/platform/graphql/http-subscription.plugin';

describe('which Accept asks for multipart subscriptions', () => {
  it.each([
    // Apollo Client 4's HttpLink, as it sends it.
    'multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9',
    'multipart/mixed;subscriptionSpec="1.0"',
    'application/json, multipart/mixed; subscriptionSpec="1.0"',
    'Multipart/Mixed; SubscriptionSpec=1.0',
  ])('%s: yes', (accept) => {
    expect(acceptsMultipartSubscription(accept)).toBe(true);
  });

  it.each([
    undefined,
    '*/*',
    'application/json',
    'text/event-stream',
    // Incremental delivery (@defer), not subscriptions.
    'multipart/mixed;deferSpec=20220824',
    'multipart/mixed',
    'application/json;subscriptionSpec=1.0',
  ])('%s: no', (accept) => {
    expect(acceptsMultipartSubscription(accept)).toBe(false);
  });
});

describe('which Accept takes @defer and @stream payloads as multipart', () => {
  it.each([
    // Apollo Client 4's HttpLink with Defer20220824Handler.
    'multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9',
    'multipart/mixed; deferSpec="20220824"',
    // urql's fetch exchange lists it bare.
    'application/graphql-response+json, application/json, text/event-stream, multipart/mixed',
    'multipart/mixed',
  ])('%s: yes', (accept) => {
    expect(acceptsMultipartIncremental(accept)).toBe(true);
  });

  it.each([
    undefined,
    '*/*',
    'application/json',
    'text/event-stream',
    // Subscriptions, or a format of incremental delivery this gateway does not write.
    'multipart/mixed;subscriptionSpec=1.0',
    'multipart/mixed;incrementalSpec=v0.2;deferSpec=v0.2',
    // Apollo Client's GraphQL17Alpha9Handler.
    'multipart/mixed;incrementalSpec=v0.2,application/json',
    'multipart/mixedup',
  ])('%s: no', (accept) => {
    expect(acceptsMultipartIncremental(accept)).toBe(false);
  });
});

import { parse, type OperationDefinitionNode } from 'graphql';
import { isAnswerCacheable } from '../../src/platform/graphql/answer-cacheability';
import { buildAppSchema } from '../../src/app/schema';

describe('isAnswerCacheable', () => {
  let check: (source: string) => boolean;

  beforeAll(async () => {
    const schema = await buildAppSchema();
    check = (source) => {
      const document = parse(source);
      return isAnswerCacheable(
        schema,
        document,
        document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!,
      );
    };
  });

  it('allows reads that only touch the data API', () => {
    expect(check('{ viewer { accounts { id balance { current } transactions(first: 5) { nodes { id amount { amount } } } } cards { id } } }')).toBe(true);
    expect(check('query Q($id: ID!) { viewer { card(id: $id) { balance { current } } ...F } } fragment F on Viewer { accounts { id } }')).toBe(true);
  });

  it.each([
    ['payouts, read live from the provider', '{ viewer { payouts { status } } }'],
    ['verified beneficiaries, read from the store', '{ viewer { verifiedBeneficiaries { iban } } }'],
    ['such a field hidden in a fragment', '{ viewer { ...F } } fragment F on Viewer { accounts { id } payouts { status } }'],
    ['a payment', '{ payment(id: "x") { refundedAmountInMinor } }'],
    ['introspection', '{ __schema { queryType { name } } }'],
    ['a mutation', 'mutation { verifyAccountHolder(name: "A") { verified } }'],
  ])('refuses %s', (_what, source) => {
    expect(check(source)).toBe(false);
  });
});

import { DataClient } from '../../../../src/platform/provider/data.client';
import { LazyProviderList } from '../../../../src/platform/provider/provider-list';
import { mockProvider, ORIGIN } from '../../../helpers/mock-provider';

const user = { token: async () => 'user-token' };
const BODY = '{"results":[{"transaction_id":"t1","amount":-2.99},{"transaction_id":"t2","amount":100.10}],"status":"Succeeded"}';

describe('DataClient.fetch and FAST_PATHS', () => {
  it.each([
    ['keeps a list as the provider’s bytes, scanned and parsed where read (the default)', undefined, LazyProviderList],
    ['parses it whole, the ordinary way, with lazyLists false (FAST_PATHS=off)', false, Array],
  ])('%s; the same elements either way', async (_case, lazyLists, kind) => {
    const provider = mockProvider();
    provider.on('GET', '/data/v1/accounts/a1/transactions', { status: 200, body: BODY });
    const client = new DataClient(provider.http, { dataUrl: ORIGIN, lazyLists });
    const list = await client.fetch(user, { resource: 'accountTransactions', id: 'a1' });
    expect(list).toBeInstanceOf(kind);
    expect(list.slice()).toEqual([
      { transaction_id: 't1', amount: '-2.99' },
      { transaction_id: 't2', amount: '100.10' },
    ]);
  });
});

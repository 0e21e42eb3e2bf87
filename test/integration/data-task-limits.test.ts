import { createPostgresSchema, type PostgresSchema } from '../helpers/postgres';
import { startStack, type GraphQLResult, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';

/*
 * Data tasks follow their bank connection (a disconnected bank's stored results are deleted and never served) and
 * are capped per user (DATA_TASKS_MAX_PER_USER) and in size (DATA_TASK_RESULTS_MAX_BYTES). Sandbox time runs at
 * 1/1000 of real time, so tasks complete when a test advances the sandbox clock by 1 s.
 */

const START = 'mutation Start($input: StartDataTaskInput!) { startDataTask(input: $input) { id: taskId status } }';
const TASK = 'query Task($id: ID!) { dataTask(id: $id) { id: taskId status accounts { id: accountId } transactions { id: transactionId } } }';
const CONNECTIONS = '{ viewer { connections { id: connectionId providerId } } }';

interface Task {
  id: string;
  status: string;
  accounts: { id: string }[] | null;
  transactions: { id: string }[] | null;
}

async function start(stack: Stack, session: string, input: Record<string, unknown>): Promise<GraphQLResult<{ startDataTask: Task }>> {
  return stack.graphql<{ startDataTask: Task }>(START, { input }, session);
}

async function started(stack: Stack, session: string, input: Record<string, unknown>): Promise<Task> {
  const result = await start(stack, session, input);
  expect(result.errors).toBeUndefined();
  return result.data!.startDataTask;
}

function readTask(stack: Stack, session: string, id: string): Promise<GraphQLResult<{ dataTask: Task | null }>> {
  return stack.graphql<{ dataTask: Task | null }>(TASK, { id }, session);
}

async function completeTasks(stack: Stack): Promise<void> {
  await stack.sandboxJson('POST', '/sandbox/clock', { advanceSeconds: 1 });
}

/** Reads the status alone: reading a result field would fetch the results. */
async function succeeded(stack: Stack, session: string, id: string): Promise<void> {
  await waitFor(async () => {
    const answer = await stack.graphql<{ dataTask: { status: string } | null }>('query ($id: ID!) { dataTask(id: $id) { status } }', { id }, session);
    return answer.data?.dataTask?.status === 'SUCCEEDED' || undefined;
  }, `task ${id} to succeed`);
}

async function storedRow(stack: Stack, taskId: string): Promise<{ results: string | null; status: string } | undefined> {
  return stack.gateway.database.db.selectFrom('dataTasks').select(['results', 'status']).where('taskId', '=', taskId).executeTakeFirst();
}

describe.each(['sqlite', 'postgres'] as const)('data tasks follow their bank connection (%s)', (store) => {
  let stack: Stack;
  let schema: PostgresSchema | undefined;
  let session: string;
  let userId: string;
  let mock: string;
  let north: string;

  beforeAll(async () => {
    schema = store === 'postgres' ? await createPostgresSchema('data_task_connections') : undefined;
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001', ...(schema ? { STORE_URL: schema.url } : {}) } });
  });

  beforeEach(async () => {
    // sam banks at two banks: one user with two connections, so one can go while the other stays.
    const first = await stack.signIn('sam', 'doe');
    session = await stack.signIn('sam', 'doe', { bank: 'mock-north', sessionToken: first });
    const viewer = await stack.graphql<{ viewer: { connections: { id: string; providerId: string }[] } }>(CONNECTIONS, {}, session);
    const connections = viewer.data!.viewer.connections;
    mock = connections.find((connection) => connection.providerId === 'mock')!.id;
    north = connections.find((connection) => connection.providerId === 'mock-north')!.id;
    userId = (await stack.graphql<{ viewer: { id: string } }>('{ viewer { id: userId } }', {}, session)).data!.viewer.id;
  });

  afterAll(async () => {
    await stack?.close();
    await schema?.drop();
  });

  /** One ACCOUNTS task per connection, completed and read once, so each has its results stored. */
  async function storedTasks(): Promise<{ kept: Task; gone: Task }> {
    const kept = await started(stack, session, { resource: 'ACCOUNTS', connectionId: mock });
    const gone = await started(stack, session, { resource: 'ACCOUNTS', connectionId: north });
    await completeTasks(stack);
    for (const task of [kept, gone]) {
      await succeeded(stack, session, task.id);
      expect((await readTask(stack, session, task.id)).data!.dataTask!.accounts!.length).toBeGreaterThan(0);
      expect((await storedRow(stack, task.id))?.results).toEqual(expect.any(String));
    }
    return { kept, gone };
  }

  it("after disconnectBank, dataTask answers none of that bank's accounts and its stored results are deleted", async () => {
    const { kept, gone } = await storedTasks();
    const disconnected = await stack.graphql('mutation ($id: ID!) { disconnectBank(connectionId: $id) { id status } }', { id: north }, session);
    expect(disconnected.errors).toBeUndefined();

    const answer = await readTask(stack, session, gone.id);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.dataTask).toBeNull();
    expect(await storedRow(stack, gone.id)).toBeUndefined();
    // The other bank's task is untouched.
    expect((await readTask(stack, session, kept.id)).data!.dataTask!.accounts!.length).toBeGreaterThan(0);
    expect((await storedRow(stack, kept.id))?.results).toEqual(expect.any(String));
  });

  it('never serves the results of a revoked connection, even when nothing deleted them, and deletes them on the announcement', async () => {
    const { gone } = await storedTasks();
    // Revoked in the store with no deletion yet, as when the deletion lost a race or another path revoked it.
    await stack.gateway.features.identity.connections.revoke(userId, north);
    stack.gateway.features.identity.connections.forgetConnections(userId);
    expect((await storedRow(stack, gone.id))?.results).toEqual(expect.any(String));
    const answer = await readTask(stack, session, gone.id);
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.dataTask).toBeNull();

    // Every instance hears the revocation on the bus and deletes what is left.
    await stack.gateway.features.identity.identityEvents.publish({ kind: 'disconnected', userId, connectionId: north });
    await waitFor(async () => (await storedRow(stack, gone.id)) === undefined || undefined, 'the revoked connection’s task to be deleted');
  });

  it('has the reconciler sweep the tasks of a connection revoked with no announcement (a grant that replaced it)', async () => {
    const { kept, gone } = await storedTasks();
    await stack.gateway.features.identity.connections.revoke(userId, north);
    await stack.gateway.scheduler.runOnce();
    expect(await storedRow(stack, gone.id)).toBeUndefined();
    expect((await storedRow(stack, kept.id))?.results).toEqual(expect.any(String));
  });

  it('deletes every task of a revoked user', async () => {
    const { kept, gone } = await storedTasks();
    const revoked = await stack.graphql('mutation ($id: ID!) { revokeUser(userId: $id) }', { id: userId }, stack.merchantKey);
    expect(revoked.errors).toBeUndefined();
    expect(await storedRow(stack, kept.id)).toBeUndefined();
    expect(await storedRow(stack, gone.id)).toBeUndefined();
  });
});

describe('the size of stored results', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001', DATA_TASK_RESULTS_MAX_BYTES: '4096' } });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('fails a task whose results are over DATA_TASK_RESULTS_MAX_BYTES, says so, keeps nothing and does not fetch them again', async () => {
    const session = await stack.signIn('john', 'doe');
    const accounts = await stack.graphql<{ viewer: { accounts: { id: string }[] } }>('{ viewer { accounts { id: accountId } } }', {}, session);
    const account = accounts.data!.viewer.accounts[0]!.id;
    const task = await started(stack, session, { resource: 'ACCOUNT_TRANSACTIONS', id: account });
    await completeTasks(stack);
    await succeeded(stack, session, task.id);

    const refused = await readTask(stack, session, task.id);
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors![0]!.extensions).toMatchObject({ code: 'DATA_TASK_LIMIT_EXCEEDED', limit: 'DATA_TASK_RESULTS_MAX_BYTES', max: 4096 });
    expect(refused.errors![0]!.message).toMatch(/more than the 4096 bytes DATA_TASK_RESULTS_MAX_BYTES lets the gateway keep for one task/);
    expect(refused.data!.dataTask!.transactions).toBeNull();

    const after = await readTask(stack, session, task.id);
    expect(after.errors).toBeUndefined();
    expect(after.data!.dataTask).toMatchObject({ status: 'FAILED', transactions: null });
    expect(await storedRow(stack, task.id)).toEqual({ results: null, status: 'FAILED' });
    const { requests } = await stack.sandboxJson<{ requests: { path: string }[] }>('GET', '/sandbox/requests');
    expect(requests.filter((request) => request.path === `/data/v1/results/${task.id}`)).toHaveLength(1);
  });
});

describe.each(['sqlite', 'postgres'] as const)('data tasks per user (%s)', (store) => {
  let stack: Stack;
  let schema: PostgresSchema | undefined;

  beforeAll(async () => {
    schema = store === 'postgres' ? await createPostgresSchema('data_task_limits') : undefined;
    stack = await startStack({
      env: { RATE_LIMIT_BURST: '1000', RATE_LIMIT_PER_SECOND: '1000', ...(schema ? { STORE_URL: schema.url } : {}) },
    });
  });

  afterAll(async () => {
    await stack?.close();
    await schema?.drop();
  });

  it('accepts DATA_TASKS_MAX_PER_USER (50) tasks however fast they come, refuses the 51st with DATA_TASK_LIMIT_EXCEEDED, and not another user', async () => {
    const john = await stack.signIn('john', 'doe');
    const answers = await Promise.all(Array.from({ length: 60 }, () => start(stack, john, { resource: 'ACCOUNTS' })));
    const accepted = answers.filter((answer) => answer.errors === undefined);
    const refused = answers.filter((answer) => answer.errors !== undefined);
    expect(accepted).toHaveLength(50);
    expect(refused).toHaveLength(10);
    for (const answer of refused) {
      expect(answer.errors![0]!.extensions).toMatchObject({ code: 'DATA_TASK_LIMIT_EXCEEDED', limit: 'DATA_TASKS_MAX_PER_USER', max: 50 });
      expect(answer.errors![0]!.message).toMatch(/already has 50 data tasks open or stored, the most DATA_TASKS_MAX_PER_USER allows/);
    }
    const next = await start(stack, john, { resource: 'ACCOUNTS' });
    expect(next.errors?.[0]?.extensions?.code).toBe('DATA_TASK_LIMIT_EXCEEDED');
    const stored = await stack.gateway.database.db.selectFrom('dataTaskRequests').select('tokenHash').execute();
    expect(stored).toHaveLength(50);

    const jane = await stack.signIn('jane', 'doe');
    await started(stack, jane, { resource: 'ACCOUNTS' });
  });
});

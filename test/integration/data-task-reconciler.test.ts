import { startStack, type Stack } from '../helpers/stack';
import { waitFor } from '../helpers/wait-for';
import { connectWs, disposeWsClients } from '../helpers/ws-client';

const START = `mutation Start($input: StartDataTaskInput!) { startDataTask(input: $input) { id: taskId status } }`;
const UPDATED = `subscription Updated($id: ID!) { dataTaskUpdated(id: $id) { id: taskId status completedAt accounts { id: accountId } } }`;
const READ = `query Read($id: ID!) { dataTask(id: $id) { id: taskId status accounts { id: accountId } } }`;

type Task = { id: string; status: string; completedAt?: string | null; accounts: { id: string }[] | null };

/** Nothing listens here: a webhook sent to it is lost, as while the gateway was down and the provider gave up. */
const DEAD_ADDRESS = 'http://127.0.0.1:1';

describe('the reconciler and data tasks whose webhook was lost', () => {
  let stack: Stack;

  beforeAll(async () => {
    // The reconciler runs only when the test asks (runOnce); any task without its webhook is overdue at once.
    stack = await startStack({ env: { SANDBOX_TIME_SCALE: '0.001', DATA_TASK_WEBHOOK_GRACE_MS: '0', RECONCILE_INTERVAL_MS: String(24 * 3600 * 1000) } });
  });

  afterEach(async () => {
    await disposeWsClients();
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('fetches the results by task id, completes the task and ends its subscription', async () => {
    const session = await stack.signIn('john', 'doe');
    const gatewayUrl = stack.gateway.features.live.publicUrl();
    stack.gateway.features.live.setPublicUrl(DEAD_ADDRESS);
    let task: Task;
    try {
      const started = await stack.graphql<{ startDataTask: Task }>(START, { input: { resource: 'ACCOUNTS' } }, session);
      task = started.data!.startDataTask;
    } finally {
      stack.gateway.features.live.setPublicUrl(gatewayUrl);
    }
    expect(task.status).toBe('QUEUED');
    const live = connectWs(stack.gateway.url, session).subscribe<{ dataTaskUpdated: Task }>(UPDATED, { id: task.id });
    expect((await live.next()).data?.dataTaskUpdated.status).toBe('QUEUED');

    // The provider finishes the task; its webhook goes to the dead address and is never received.
    await stack.sandboxJson('POST', '/sandbox/clock', { advanceSeconds: 1 });
    await waitFor(async () => {
      const { deliveries } = await stack.sandboxJson<{ deliveries: { body: { task_id?: string }; attempts: number }[] }>('GET', '/sandbox/webhooks');
      return deliveries.find((delivery) => delivery.body.task_id === task.id && delivery.attempts > 0);
    }, 'the sandbox to try the webhook');
    const stillQueued = await stack.graphql<{ dataTask: Task }>(READ, { id: task.id }, session);
    expect(stillQueued.data?.dataTask.status).toBe('QUEUED');

    expect(await stack.gateway.scheduler.runOnce()).toBe(true);
    const done = (await live.next()).data!.dataTaskUpdated;
    expect(done.status).toBe('SUCCEEDED');
    expect(done.completedAt).toEqual(expect.any(String));
    expect(done.accounts?.length).toBeGreaterThan(0);
    await expect(live.ended).resolves.toEqual({ completed: true });
    const read = await stack.graphql<{ dataTask: Task }>(READ, { id: task.id }, session);
    expect(read.data?.dataTask).toMatchObject({ status: 'SUCCEEDED', accounts: done.accounts });
    const metrics = await (await fetch(`${stack.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/bankgraph_reconciler_repairs_total\{kind="data_task_completed"\} 1/);
  });

  it('leaves a task the provider has not finished for a later pass', async () => {
    const session = await stack.signIn('john', 'doe');
    const gatewayUrl = stack.gateway.features.live.publicUrl();
    stack.gateway.features.live.setPublicUrl(DEAD_ADDRESS);
    let task: Task;
    try {
      task = (await stack.graphql<{ startDataTask: Task }>(START, { input: { resource: 'CARDS' } }, session)).data!.startDataTask;
    } finally {
      stack.gateway.features.live.setPublicUrl(gatewayUrl);
    }
    await stack.gateway.scheduler.runOnce();
    expect((await stack.graphql<{ dataTask: Task }>(READ, { id: task.id }, session)).data?.dataTask.status).toBe('QUEUED');
  });
});

import { setTimeout as delay } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { operationDeadline, OperationDeadlineError } from '../../../../src/platform/provider/operation-deadline';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

describe('an operation deadline', () => {
  it('aborts its provider calls when it passes, garbage collected meanwhile or not', async () => {
    const deadline = operationDeadline(100);
    const signal = deadline.signal();
    await delay(20);
    collectGarbage();
    await delay(400);
    expect(signal.aborted).toBe(true);
    expect(deadline.signal()).toBe(signal);
  });

  it('aborts at once when the operation is cancelled', () => {
    const deadline = operationDeadline(60_000);
    const signal = deadline.signal();
    deadline.cancel();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(OperationDeadlineError);
  });
});

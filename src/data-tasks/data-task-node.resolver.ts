import type { OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import { toDataTask } from './data-task.mapper';
import type { DataTaskService } from './data-task.service';
import { toDataTaskSnapshot } from './data-task.snapshot';
import { DATA_TASK_TAG } from './data-task.type';

/** node(id:) for data tasks: as dataTask(id:), a task only to the user who started it; anyone else's is null. */
export function dataTaskNodeType(dataTasks: DataTaskService): NodeType {
  return {
    tag: DATA_TASK_TAG,
    arity: 1,
    async load(keys: readonly (readonly string[])[], context: OperationContext) {
      const { principal } = context;
      if (principal.kind !== 'user') return keys.map(() => null);
      // One store query for the whole batch, however many ids it holds.
      const tasks = await dataTasks.findOwnMany(
        principal.userId,
        keys.map(([id]) => id ?? ''),
      );
      return tasks.map((task) => (task ? toDataTask(toDataTaskSnapshot(task)) : null));
    },
  };
}

import type { OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import { isUuid } from '../platform/validation/text-rules';
import { toDataTask } from './data-task.mapper';
import type { DataTaskService } from './data-task.service';
import { toDataTaskSnapshot } from './data-task.snapshot';
import { DATA_TASK_TAG } from './data-task.type';

/** node(id:) for data tasks: as dataTask(id:), a task only to the user who started it; anyone else's is null. */
export function dataTaskNodeType(dataTasks: DataTaskService): NodeType {
  return {
    tag: DATA_TASK_TAG,
    arity: 1,
    load(keys: readonly (readonly string[])[], context: OperationContext) {
      const { principal } = context;
      return Promise.all(
        keys.map(async ([id]) => {
          if (principal.kind !== 'user' || id === undefined || !isUuid(id)) return null;
          const task = await dataTasks.findOwn(principal.userId, id);
          return task ? toDataTask(toDataTaskSnapshot(task)) : null;
        }),
      );
    },
  };
}

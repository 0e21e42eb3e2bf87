import { useState } from 'react';
import { useMutation, useSubscription } from '@apollo/client/react';
import { DATA_TASK_UPDATED, START_DATA_TASK, type DataResource, type DataTaskView } from './operations';
import { describeError } from './errors';

/** Asks the bank for fresh data as a task: started now, its result pushed when the bank has answered. */
export function DataTask() {
  const [resource, setResource] = useState<DataResource>('ACCOUNTS');
  const [start, started] = useMutation(START_DATA_TASK);
  return (
    <section>
      <h2>Fetch fresh data from the bank</h2>
      <label>
        What
        <select value={resource} onChange={(event) => setResource(event.target.value as DataResource)}>
          <option value="ACCOUNTS">Accounts</option>
          <option value="CARDS">Cards</option>
        </select>
      </label>
      <button onClick={() => void start({ variables: { input: { resource } } })}>Start data task</button>
      {started.error && <p className="alert">{describeError(started.error)}</p>}
      {started.data && <TaskStatus task={started.data.startDataTask} />}
    </section>
  );
}

function TaskStatus({ task }: { task: DataTaskView }) {
  const { data, error } = useSubscription(DATA_TASK_UPDATED, { variables: { id: task.taskId } });
  const latest = data?.dataTaskUpdated ?? task;
  const results = latest.accounts ?? latest.cards;
  return (
    <div>
      <p>
        Data task: <span className="status">{latest.status}</span>
        {error && <span className="alert"> (live updates stopped: {describeError(error)})</span>}
      </p>
      {results && (
        <ul aria-label="Task results">
          {results.map((item) => (
            <li key={item.id}>{item.displayName}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

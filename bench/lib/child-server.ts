import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildMessage, MemorySample, ParentMessage } from './ipc.types';

export interface ChildOptions {
  /** Script name under dist/bench/servers, without `.js`. */
  script: 'sandbox.server' | 'gateway.server' | 'naive.server' | 'ceiling.server' | 'floor.server' | 'fan-out-floor.server' | 'subscribers.client';
  /** A label for progress lines and errors. */
  label: string;
  init: unknown;
  /** Extra process environment (NODE_ENV=production is always set). */
  env?: Record<string, string>;
  /** --expose-gc so memory samples are taken after a full collection. */
  exposeGc?: boolean;
  startTimeoutMs?: number;
}

const SERVERS_DIR = join(__dirname, '..', 'servers');

/** A server running in its own process, started and stopped by the bench parent. */
export class ChildServer<Info = unknown> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly label: string,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (message: ChildMessage) => {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      clearTimeout(waiter.timer);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(new Error(`${label}: ${message.error}`));
    });
    child.once('exit', (code, signal) => {
      for (const [id, waiter] of this.pending) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error(`${label} exited (code ${code}, signal ${signal}) before answering request ${id}`));
      }
      this.pending.clear();
    });
  }

  info!: Info;

  get pid(): number {
    return this.child.pid!;
  }

  static async start<Info>(options: ChildOptions): Promise<ChildServer<Info>> {
    const child = fork(join(SERVERS_DIR, `${options.script}.js`), [], {
      env: { ...process.env, NODE_ENV: 'production', ...options.env },
      execArgv: [...(options.exposeGc ? ['--expose-gc'] : []), ...profilingArgs()],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const server = new ChildServer<Info>(child, options.label);
    try {
      server.info = (await server.request({ type: 'start', init: options.init }, options.startTimeoutMs ?? 60_000)) as Info;
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return server;
  }

  /** A memory sample taken inside the child, after a full GC when the child was started with exposeGc. */
  async memory(gc = true): Promise<MemorySample> {
    return (await this.request({ type: 'memory', gc }, 30_000)) as MemorySample;
  }

  /** One of the child's own operations (see StartedServer.call). */
  call<T>(method: string, args: unknown, timeoutMs: number): Promise<T> {
    return this.request({ type: 'call', method, args }, timeoutMs) as Promise<T>;
  }

  /** Peak resident set size so far (VmHWM), read from /proc so it includes everything the process ever touched. */
  peakRssBytes(): number {
    return procStatusKb(this.pid, 'VmHWM') * 1024;
  }

  rssBytes(): number {
    return procStatusKb(this.pid, 'VmRSS') * 1024;
  }

  /** CPU time (user + system) the process has used so far, from /proc/<pid>/stat, in milliseconds. */
  cpuMs(): number {
    const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line (11 and 12 here), in USER_HZ ticks: 100 per second
    // on Linux whatever the kernel's own tick rate, so each tick is 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  }

  /**
   * CPU time of the process's threads so far, in milliseconds to the nanosecond: the first field of each thread's
   * /proc/<pid>/task/<tid>/schedstat (time on a CPU, user and system), summed. cpuMs() counts 10 ms ticks, too
   * coarse for spans of a few milliseconds; a thread that has ended is no longer counted, so a span is measured on
   * a process whose threads live as long as it does (Node's main thread, its V8 and libuv pools).
   */
  threadsCpuMs(): number {
    let nanoseconds = 0;
    for (const tid of readdirSync(`/proc/${this.pid}/task`)) {
      try {
        nanoseconds += Number(readFileSync(`/proc/${this.pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return nanoseconds / 1e6;
  }

  /** Asks the child to close its server and exit; kills it (this child only) if it does not within the time. */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const request = this.request({ type: 'close' }, timeoutMs).catch(() => undefined);
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
    if ((await Promise.race([request.then(() => this.exited), timer])) === 'timeout') this.child.kill('SIGKILL');
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
  }

  private request(message: DistributiveOmit<ParentMessage, 'id'>, timeoutMs: number): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.label}: no answer to ${message.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.send({ ...message, id } as ParentMessage, (error) => {
        if (!error) return;
        clearTimeout(timer);
        this.pending.delete(id);
        reject(error);
      });
    });
  }
}

/**
 * BENCH_CPU_PROF_DIR=<dir> writes a V8 CPU profile of every server child there (one file per process id, written
 * when it exits), for finding where a missed target's time goes. Profiling slows the children: not for figures.
 */
function profilingArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function procStatusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

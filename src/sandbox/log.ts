/**
 * The sandbox's log: one JSON object per line, like the gateway's, because an embedded sandbox writes into the
 * same stream and a raw stack trace there breaks every tool that reads that stream line by line.
 */
export interface SandboxLog {
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
}

/** `write` receives whole lines, newline included; stdout by default, where the gateway's log goes too. */
export function jsonLineLog(write: (line: string) => void = (line) => process.stdout.write(line)): SandboxLog {
  const emit = (level: string, message: string, fields: Record<string, unknown> = {}): void => {
    const entry = { level, time: Date.now(), service: 'sandbox', msg: message, ...fields };
    write(`${JSON.stringify(entry, (_key, value: unknown) => (value instanceof Error ? errorFields(value) : value))}\n`);
  };
  return {
    error: (message, fields) => emit('error', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    info: (message, fields) => emit('info', message, fields),
  };
}

function errorFields(error: Error): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return { type: error.name, message: error.message, ...(code === undefined ? {} : { code }), stack: error.stack };
}

const HANG_UP_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE']);

/**
 * A client that closed its connection before the sandbox answered (a gateway giving up at its deadline, a test
 * tearing down) is how HTTP works, not a sandbox fault.
 */
export function isClientHangUp(error: unknown, requestDestroyed: boolean): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return requestDestroyed || (typeof code === 'string' && HANG_UP_CODES.has(code));
}

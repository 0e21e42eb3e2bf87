import type { SandboxRequest } from './request';
import type { ServerResponse } from 'node:http';

export type Handler = (req: SandboxRequest, res: ServerResponse) => void | Promise<void>;

interface Route {
  method: string;
  segments: string[];
  handler: Handler;
}

/** Matches `/v3/payments/:paymentId/refunds`-style patterns; a trailing slash on the request is ignored. */
export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, segments: split(pattern), handler });
    return this;
  }

  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | 'method-not-allowed' | undefined {
    const segments = split(path);
    let pathMatched = false;
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      pathMatched = true;
      if (route.method === method) return { handler: route.handler, params };
    }
    return pathMatched ? 'method-not-allowed' : undefined;
  }
}

function split(path: string): string[] {
  return path.split('/').filter((segment) => segment.length > 0);
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    if (expected.startsWith(':')) {
      try {
        params[expected.slice(1)] = decodeURIComponent(actual[i]!);
      } catch {
        return undefined;
      }
    } else if (expected !== actual[i]) {
      return undefined;
    }
  }
  return params;
}

import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** The longest client name kept, in characters: it labels log lines and ledger rows, so it stays short. */
export const MAX_CLIENT_NAME_LENGTH = 64;

/** The name recorded for a client whose initialize named none (or only characters that are cleaned away). */
export const UNNAMED_CLIENT = 'unnamed MCP client';

const VERSION = 'v1';

/**
 * A client's self-declared name (`clientInfo.name`) as logs and the ledger may hold it: whitespace runs made one
 * space, then control, format and private-use characters dropped, at most MAX_CLIENT_NAME_LENGTH characters.
 */
export function cleanClientName(raw: unknown): string {
  if (typeof raw !== 'string') return UNNAMED_CLIENT;
  const cleaned = [
    ...raw
      .replace(/\s+/gu, ' ')
      .replace(/\p{C}+/gu, '')
      .trim(),
  ]
    .slice(0, MAX_CLIENT_NAME_LENGTH)
    .join('')
    .trim();
  return cleaned === '' ? UNNAMED_CLIENT : cleaned;
}

/**
 * Mcp-Session-Id without server state: `v1.<client name, base64url>.<HMAC-SHA256 of the name and the principal>`,
 * minted when a client initializes, so any instance of the deployment reads the name back from the id alone on
 * every later request. The MAC binds the id to the principal it was minted for (which the id does not disclose),
 * so it names nothing more than that principal's client declared at initialize; it grants nothing, as every
 * request is still authorised by its own credential.
 */
export class AgentSessions {
  private readonly key: Buffer;

  /** `deploymentKey`: a secret every instance of the deployment shares; a key of its own is derived from it. */
  constructor(deploymentKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', deploymentKey, Buffer.alloc(0), 'bankgraph mcp session v1', 32));
  }

  mint(clientName: string, principalBinding: string): string {
    const name = Buffer.from(clientName, 'utf8').toString('base64url');
    return `${VERSION}.${name}.${this.mac(name, principalBinding).toString('base64url')}`;
  }

  /** The client name `sessionId` carries, or undefined unless this deployment minted it for `principalBinding`. */
  read(sessionId: string, principalBinding: string): string | undefined {
    const [version, name, mac, extra] = sessionId.split('.');
    if (version !== VERSION || name === undefined || mac === undefined || extra !== undefined) return undefined;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(name, principalBinding);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return Buffer.from(name, 'base64url').toString('utf8');
  }

  private mac(encodedName: string, principalBinding: string): Buffer {
    return createHmac('sha256', this.key).update(`${VERSION}\n${principalBinding}\n${encodedName}`, 'utf8').digest();
  }
}

import { randomBytes } from 'node:crypto';
import { AgentSessions, cleanClientName, MAX_CLIENT_NAME_LENGTH, UNNAMED_CLIENT } from '../../src/platform/mcp/agent-session';

describe('an MCP agent session id', () => {
  const key = randomBytes(32);
  const sessions = new AgentSessions(key);

  it('gives back the name it was minted with, to any holder of the same deployment key, for the same principal only', () => {
    const id = sessions.mint('Claude Desktop', 'user:u-1');
    expect(id).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(new AgentSessions(key).read(id, 'user:u-1')).toBe('Claude Desktop');
    expect(sessions.read(id, 'user:u-2')).toBeUndefined();
    expect(sessions.read(id, 'merchant:u-1')).toBeUndefined();
    expect(new AgentSessions(randomBytes(32)).read(id, 'user:u-1')).toBeUndefined();
  });

  it('refuses an id whose name, MAC or shape was changed', () => {
    const [version, , mac] = sessions.mint('assistant', 'user:u-1').split('.');
    expect(sessions.read(`${version}.${Buffer.from('other').toString('base64url')}.${mac}`, 'user:u-1')).toBeUndefined();
    const id = sessions.mint('assistant', 'user:u-1');
    const flipped = `${version}.${id.split('.')[1]}.${mac!.startsWith('A') ? 'B' : 'A'}${mac!.slice(1)}`;
    expect(sessions.read(flipped, 'user:u-1')).toBeUndefined();
    expect(sessions.read(`${id}.extra`, 'user:u-1')).toBeUndefined();
    expect(sessions.read(id.replace(/^v1/, 'v2'), 'user:u-1')).toBeUndefined();
    expect(sessions.read('', 'user:u-1')).toBeUndefined();
  });
});

describe('a client name as logs and the ledger keep it', () => {
  it('drops control and format characters, joins whitespace, and keeps at most the longest name allowed', () => {
    expect(cleanClientName('  Claude\u0000 \u202eDesktop\r\n\tbeta ')).toBe('Claude Desktop beta');
    expect(cleanClientName('é'.repeat(200))).toBe('é'.repeat(MAX_CLIENT_NAME_LENGTH));
    expect([...cleanClientName('🤖'.repeat(100))]).toHaveLength(MAX_CLIENT_NAME_LENGTH);
  });

  it('names a client that gave no usable name', () => {
    expect(cleanClientName(undefined)).toBe(UNNAMED_CLIENT);
    expect(cleanClientName(42)).toBe(UNNAMED_CLIENT);
    expect(cleanClientName('\u0000\u200b \n')).toBe(UNNAMED_CLIENT);
  });
});

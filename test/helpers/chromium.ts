import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

// One implementation, shared with `npm test`'s pre-step (plain JS, so it runs before anything is compiled).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain JS module, see above
const shared = require('./ensure-chromium.js') as { CHROMIUM_PATH: string; ensureChromium(): string };

export const CHROMIUM_PATH = shared.CHROMIUM_PATH;

/** Debian's Chromium at CHROMIUM_PATH, installed with apt-get first when missing and possible; throws saying what to install otherwise. */
export function ensureChromium(): string {
  return shared.ensureChromium();
}

/** Debian's Chromium, headless, without the background traffic a test must not depend on. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** A fresh profile in a temporary folder (no state from an earlier run), its first page, and a close that removes both. */
export async function launchChromium(): Promise<{ context: BrowserContext; page: Page; close(): Promise<void> }> {
  const executablePath = ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'bankgraph-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1400, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    return {
      context,
      page,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}

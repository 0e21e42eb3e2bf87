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

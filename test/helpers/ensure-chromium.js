// Debian's Chromium for the browser test. `npm test` runs this before jest (so an install never competes with
// timing-sensitive tests), and the browser test calls it too (for a direct `npx jest`). Installs the "chromium"
// package with apt-get when it is missing and apt is usable (root, or password-less sudo); otherwise fails saying
// what to install. CHROMIUM_PATH points at another binary.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');

const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

function ensureChromium() {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = !asRoot && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!hasApt || (!asRoot && !sudo)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH} and cannot be installed here (needs apt-get as root or password-less sudo). ` +
        'Install Debian\'s "chromium" package (apt-get install -y chromium), or set CHROMIUM_PATH to a Chromium binary.',
    );
  }
  const apt = (...args) =>
    spawnSync(sudo ? 'sudo' : 'apt-get', sudo ? ['-n', 'apt-get', ...args] : args, {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 15 * 60_000,
    });
  console.error(`Chromium is missing at ${CHROMIUM_PATH}: installing Debian's chromium package for the browser test…`);
  // The package lists may be missing or stale on a fresh machine: refresh them once if the first try fails.
  if (apt('install', '-y', '--no-install-recommends', 'chromium').status !== 0) {
    apt('update');
    const retry = apt('install', '-y', '--no-install-recommends', 'chromium');
    if (retry.status !== 0)
      throw new Error(`apt-get install chromium failed (exit ${retry.status}); install Debian's "chromium" package and run the tests again.`);
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium, but ${CHROMIUM_PATH} is still missing`);
  return CHROMIUM_PATH;
}

module.exports = { CHROMIUM_PATH, ensureChromium };

if (require.main === module) {
  try {
    ensureChromium();
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}

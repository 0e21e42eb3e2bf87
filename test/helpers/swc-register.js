// Lets `node -r ./test/helpers/swc-register.js src/cli/sandbox-login.ts` run the TypeScript sources as jest does
// (same swc settings), so a test can run a command-line entry point as a child process without a build.
const { transformSync } = require('@swc/core');
const fs = require('node:fs');

require.extensions['.ts'] = function compile(module, filename) {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

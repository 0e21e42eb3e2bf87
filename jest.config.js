/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
        },
        module: { type: 'commonjs' },
      },
    ],
    '/node_modules/jose/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
    // The OTLP exporter loads node:http with a dynamic import(), which Jest's CommonJS runtime cannot run without
    // --experimental-vm-modules; compiled to require() here, it behaves as in Node.
    '/node_modules/@opentelemetry/otlp-exporter-base/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // jose is ESM-only; jest's module system needs it as CommonJS (Node itself loads it with import()).
  transformIgnorePatterns: ['/node_modules/(?!(jose|@opentelemetry/otlp-exporter-base)/)'],
  setupFiles: ['reflect-metadata'],
  testTimeout: 20_000,
  // A worker per core, not Jest's default of one fewer: most suites wait on sockets and child processes, not the CPU.
  maxWorkers: '100%',
};

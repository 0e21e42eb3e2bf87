import type { CodegenConfig } from '@graphql-codegen/cli';

// An app's typed operations: `npx graphql-codegen --config codegen.ts` (this project's `npm run codegen` runs it too).
const config: CodegenConfig = {
  // The gateway's emitted schema; an app in its own repository points at its copy of it.
  schema: '../../../schema.graphql',
  documents: ['operations/**/*.graphql'],
  generates: {
    './gql/': {
      preset: 'client',
      // Writes gql/persisted-documents.json (keys `sha256:<hex>`) for PERSISTED_DOCUMENTS_MANIFEST; every document carries its hash.
      presetConfig: { persistedDocuments: true, fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: {
          DateTime: 'string',
          Date: 'string',
          YearMonth: 'string',
          Decimal: 'string',
          MinorUnits: 'number',
          JSON: 'unknown',
        },
      },
    },
  },
};

export default config;

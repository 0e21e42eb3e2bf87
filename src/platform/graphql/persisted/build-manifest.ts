import { Kind, parse, print, validate, visit, type DefinitionNode, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema } from 'graphql';
import { sha256Hex } from './persisted-documents';

export interface OperationSource {
  /** Where the text came from, for error messages: a file path, `playground example 2`. */
  name: string;
  text: string;
}

/**
 * A trusted-documents manifest (SHA-256 hex of the document -> document) from GraphQL sources: one document per
 * operation, holding the operation and the fragments it uses, printed canonically, which is the text a client
 * built from the same manifest sends and the one its hash is taken of. Every document is validated against the
 * schema first, so a manifest never carries an operation the gateway would refuse.
 */
export function buildManifest(sources: readonly OperationSource[], schema: GraphQLSchema): Record<string, string> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: { source: string; definition: DefinitionNode }[] = [];
  for (const source of sources) {
    let document: DocumentNode;
    try {
      document = parse(source.text);
    } catch (error) {
      throw new Error(`${source.name}: ${(error as Error).message}`, { cause: error });
    }
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
      else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push({ source: source.name, definition });
    }
  }
  const manifest: Record<string, string> = {};
  for (const { source, definition } of operations) {
    const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [definition, ...fragmentsUsedBy(definition, fragments, source)] };
    const errors = validate(schema, document);
    if (errors.length > 0) throw new Error(`${source}: ${errors.map((error) => error.message).join('; ')}`);
    const text = print(document);
    manifest[sha256Hex(text)] = text;
  }
  return manifest;
}

function fragmentsUsedBy(root: DefinitionNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, source: string): FragmentDefinitionNode[] {
  const used = new Map<string, FragmentDefinitionNode>();
  const pending: DefinitionNode[] = [root];
  while (pending.length > 0) {
    visit(pending.pop()!, {
      FragmentSpread(node) {
        const name = node.name.value;
        if (used.has(name)) return;
        const fragment = fragments.get(name);
        if (!fragment) throw new Error(`${source}: fragment ${name} is used but defined in none of the sources`);
        used.set(name, fragment);
        pending.push(fragment);
      },
    });
  }
  return [...used.values()];
}

import type { OperationContext } from '../operation-context';

/**
 * How one type's objects are found again by their global ids' parts. A feature registers one per type it owns
 * (src/app composes them), so node(id:) knows no feature.
 *
 * `load` gets every key of one operation's batch (nodes(ids:) and node(id:) fields side by side) and answers each
 * with the object, or null when the caller could not read it through the type's own field: not theirs, not there,
 * or no key of this type. Null says nothing more, so an id cannot be probed. It costs at most the provider calls
 * the type's own field would make for the same objects, and throws only what that field would throw (a provider
 * outage): an Error in a key's place fails that key alone.
 */
export interface NodeType {
  /** The global id's tag (see global-id.ts); one per type, unique in the schema. */
  readonly tag: string;
  /** How many parts the type's global ids have; an id with any other count is no id of this type. */
  readonly arity: number;
  load(keys: readonly (readonly string[])[], context: OperationContext): Promise<readonly (object | Error | null)[]>;
}

/** Every registered node type by tag. */
export class NodeRegistry {
  private readonly byTag = new Map<string, NodeType>();

  constructor(types: readonly NodeType[]) {
    for (const type of types) {
      if (this.byTag.has(type.tag)) throw new Error(`Two node types claim the global id tag "${type.tag}"`);
      this.byTag.set(type.tag, type);
    }
  }

  find(tag: string): NodeType | undefined {
    return this.byTag.get(tag);
  }
}

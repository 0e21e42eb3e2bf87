/** The most ids one nodes(ids:) field takes. */
export const MAX_NODE_IDS = 100;

/**
 * The most ids one operation may name through node(id:) and nodes(ids:) together, every alias counted: each id may
 * cost a store or provider read, so aliases must not multiply what one list may read (operation-limits.ts).
 */
export const MAX_NODE_IDS_PER_OPERATION = 100;

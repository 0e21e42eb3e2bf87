/**
 * The gateway's one clock, in epoch milliseconds: made once by createGateway (Date.now unless a test steps it) and
 * handed to everything that reads the time.
 */
export type Clock = () => number;

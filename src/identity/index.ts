export type { Principal } from './principal';
export { requireUser } from './principal';
export type { BankConnectionRecord, ConnectionStore } from './connection.store';
export type { UserTokenProvider } from './user-token.provider';
export { BankConnection } from './bank-connection.type';
export { toBankConnection } from './bank-connection.mapper';

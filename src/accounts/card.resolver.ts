import { toCardBalance } from './card.mapper';
import { CardBalance } from './card-balance.type';
import { Card } from './card.type';
import { holdingFieldsResolver } from './holding-fields.resolver';
import { holderRef } from './transaction.mapper';

export const CardResolver = holdingFieldsResolver({
  holder: 'card',
  type: Card,
  balanceType: CardBalance,
  async balance(reads, card) {
    const balance = await reads.cardBalance(holderRef(card));
    return balance ? toCardBalance(balance) : null;
  },
});

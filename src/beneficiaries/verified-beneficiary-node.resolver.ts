import type { OperationContext } from '../platform/graphql/operation-context';
import type { NodeType } from '../platform/graphql/node/node.registry';
import type { BeneficiaryService } from './beneficiary.service';
import { toVerifiedBeneficiary, verifiedBeneficiaryKey } from './verification.mapper';
import { VERIFIED_BENEFICIARY_TAG } from './verified-beneficiary.type';

/** node(id:) for verified beneficiaries: the signed-in user's own, from one read of their list (viewer.verifiedBeneficiaries). */
export function verifiedBeneficiaryNodeType(beneficiaries: BeneficiaryService): NodeType {
  return {
    tag: VERIFIED_BENEFICIARY_TAG,
    arity: 1,
    async load(keys: readonly (readonly string[])[], context: OperationContext) {
      const { principal } = context;
      if (principal.kind !== 'user') return keys.map(() => null);
      const list = await beneficiaries.listForUser(principal.userId);
      return keys.map(([key]) => {
        const found = list.find((record) => verifiedBeneficiaryKey(principal.userId, record.iban) === key);
        return found ? toVerifiedBeneficiary(found, principal.userId) : null;
      });
    },
  };
}

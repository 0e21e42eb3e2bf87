import { BadUserInputError } from '../errors/gateway-errors';

/**
 * Collects every problem of one input object, so a client fixes them all in one round trip: the error's message
 * lists each (`input.currency must be …; input.amountInMinor must be …`) and `extensions.field` names the first.
 */
export class InputProblems {
  private readonly problems: { field: string; message: string }[] = [];

  add(field: string, message: string): void {
    this.problems.push({ field, message });
  }

  throwIfAny(): void {
    const [first] = this.problems;
    if (!first) return;
    throw new BadUserInputError(this.problems.map(({ field, message }) => `${field} ${message}`).join('; ') + '.', first.field);
  }
}

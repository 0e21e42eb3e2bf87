import { lifecycle } from '../../../../src/platform/lifecycle/lifecycle';

describe('lifecycle', () => {
  const refund = lifecycle([['PENDING'], ['AUTHORIZED'], ['EXECUTED', 'FAILED']]);

  it('ranks each status by its stage, the statuses of one stage alike', () => {
    expect([refund.rank('PENDING'), refund.rank('AUTHORIZED'), refund.rank('EXECUTED'), refund.rank('FAILED')]).toEqual([0, 1, 2, 2]);
  });

  it('makes the last stage final, and only it', () => {
    expect([...refund.final]).toEqual(['EXECUTED', 'FAILED']);
    expect(refund.isFinal('FAILED')).toBe(true);
    expect(refund.isFinal('AUTHORIZED')).toBe(false);
  });

  it('names the statuses of earlier stages only, the ones a status may replace', () => {
    expect(refund.before('PENDING')).toEqual([]);
    expect(refund.before('AUTHORIZED')).toEqual(['PENDING']);
    expect(refund.before('EXECUTED')).toEqual(['PENDING', 'AUTHORIZED']);
  });

  it('refuses a status a closed lifecycle does not declare instead of guessing its rank', () => {
    expect(() => refund.rank('REVERSED' as 'PENDING')).toThrow('REVERSED is not a status of this lifecycle');
    expect(refund.knows('REVERSED')).toBe(false);
    expect(refund.knows('PENDING')).toBe(true);
  });

  it('ranks a word an open lifecycle does not declare with the status it names, neither lost nor final', () => {
    const payout = lifecycle([['queued'], ['submitted'], ['settled', 'failed']], { othersRankWith: 'submitted' });
    expect(payout.knows('reversed')).toBe(false);
    expect(payout.rank('reversed')).toBe(1);
    expect(payout.isFinal('reversed')).toBe(false);
    expect(payout.before('reversed')).toEqual(['queued']);
    expect(payout.rank('constructor')).toBe(1);
  });
});

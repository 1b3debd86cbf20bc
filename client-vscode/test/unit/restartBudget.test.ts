import { describe, expect, it } from 'vitest';
import { RestartBudget } from '../../src/common/restartBudget';

describe('RestartBudget', () => {
    it('allows max restarts within the window, then refuses', () => {
        let now = 0;
        const budget = new RestartBudget(3, 1000, () => now);
        expect([budget.allow(), budget.allow(), budget.allow(), budget.allow()]).toEqual([true, true, true, false]);
        now = 1001;
        expect(budget.allow()).toBe(true);
    });

    it('starts over after a reset', () => {
        const budget = new RestartBudget(1, 1000, () => 0);
        expect(budget.allow()).toBe(true);
        expect(budget.allow()).toBe(false);
        budget.reset();
        expect(budget.allow()).toBe(true);
    });
});

/** Allows at most `max` server restarts within a sliding window, so a server that dies on start is not restarted forever. */
export class RestartBudget {
    private readonly restarts: number[] = [];

    constructor(
        readonly max: number,
        readonly windowMs: number,
        private readonly now: () => number = Date.now,
    ) {}

    /** Records a restart and says whether it is allowed. */
    allow(): boolean {
        const now = this.now();
        while (this.restarts.length > 0 && now - this.restarts[0] > this.windowMs) {
            this.restarts.shift();
        }
        if (this.restarts.length >= this.max) {
            return false;
        }
        this.restarts.push(now);
        return true;
    }

    reset(): void {
        this.restarts.length = 0;
    }
}

import { describe, expect, it } from 'vitest';
import { openLineOf, pageOfAnswer } from '../../src/common/runPage';

describe('pageOfAnswer', () => {
    it('reads the page a "find the layer" answer names', () => {
        const answer = { status: 'error', message: 'ERROR: ...', view: { uri: 'file:///w/head.py', entry: 'head' } };
        expect(pageOfAnswer(answer)).toEqual({ uri: 'file:///w/head.py', entry: 'head' });
    });

    it('finds none in a plain run, a refusal or a malformed answer', () => {
        expect(pageOfAnswer({ status: 'passed', message: 'PASS' })).toBeUndefined();
        expect(pageOfAnswer({ status: 'refused', message: 'untrusted' })).toBeUndefined();
        expect(pageOfAnswer({ view: { uri: 'file:///w/head.py', entry: 3 } })).toBeUndefined();
        expect(pageOfAnswer(null)).toBeUndefined();
        expect(pageOfAnswer('view')).toBeUndefined();
    });
});

describe('openLineOf', () => {
    it('accepts an absolute path and a 1-based line', () => {
        expect(openLineOf({ type: 'open', path: '/w/head.py', line: 29 })).toEqual({ path: '/w/head.py', line: 29 });
    });

    it('refuses anything else the page might post', () => {
        for (const message of [
            { type: 'open', path: 'head.py', line: 29 },
            { type: 'open', path: '/w/head.py', line: 0 },
            { type: 'open', path: '/w/head.py', line: 2.5 },
            { type: 'open', path: '/w/head.py', line: '29' },
            { type: 'run', path: '/w/head.py', line: 29 },
            { path: '/w/head.py', line: 29 },
            undefined,
            'open',
        ]) {
            expect(openLineOf(message)).toBeUndefined();
        }
    });
});

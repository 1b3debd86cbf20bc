import { describe, expect, it } from 'vitest';
import { chooseInterpreter } from '../../src/common/interpreter';

describe('chooseInterpreter', () => {
    it('prefers the ascend-lsp.interpreter setting', () => {
        expect(chooseInterpreter(['/opt/venv/bin/python', '-X', 'utf8'], '/usr/bin/python3.12')).toEqual({
            command: ['/opt/venv/bin/python', '-X', 'utf8'],
            source: 'setting',
        });
    });

    it("then takes the Python extension's interpreter", () => {
        expect(chooseInterpreter([], '/home/me/.venv/bin/python')).toEqual({
            command: ['/home/me/.venv/bin/python'],
            source: 'python extension',
        });
    });

    it('falls back to python3 on PATH', () => {
        expect(chooseInterpreter([], undefined)).toEqual({ command: ['python3'], source: 'PATH' });
    });
});

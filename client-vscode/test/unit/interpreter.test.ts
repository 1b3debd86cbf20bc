import * as path from 'path';
import { describe, expect, it } from 'vitest';
import { chooseInterpreter } from '../../src/common/interpreter';

describe('chooseInterpreter', () => {
    it('prefers the ascend-lsp.interpreter setting', () => {
        expect(chooseInterpreter(['/opt/venv/bin/python', '-X', 'utf8'], '/usr/bin/python3.12')).toEqual({
            command: ['/opt/venv/bin/python', '-X', 'utf8'],
            source: 'setting',
        });
    });

    it('takes a relative path in the setting from the workspace folder, and a bare name from PATH', () => {
        expect(chooseInterpreter(['.venv/bin/python', '-X', 'utf8'], undefined, '/work/project').command).toEqual([
            path.resolve('/work/project', '.venv/bin/python'),
            '-X',
            'utf8',
        ]);
        expect(chooseInterpreter(['python3.12'], undefined, '/work/project').command).toEqual(['python3.12']);
        expect(chooseInterpreter(['/opt/venv/bin/python'], undefined, '/work/project').command).toEqual(['/opt/venv/bin/python']);
        // No folder (no workspace, or an untrusted one): the path is not made one in the workspace.
        expect(chooseInterpreter(['.venv/bin/python'], undefined).command).toEqual(['.venv/bin/python']);
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

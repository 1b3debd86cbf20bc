import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/common/interpreter';
import { bundledLibsPath } from '../../src/common/launch';
import { ProbeOutcome, ProbeResult, interpreterProblem, probeLaunch, runProbe } from '../../src/common/probe';

const fromPath: Interpreter = { command: ['python3'], source: 'PATH' };

function probed(result: Partial<ProbeResult>): ProbeOutcome {
    return { ok: true, result: { version: [3, 11, 7], executable: '/usr/bin/python3', server: true, ...result } };
}

describe('interpreterProblem', () => {
    it('accepts Python 3.10+ with the server', () => {
        expect(interpreterProblem(fromPath, probed({}), 'useBundled')).toBeUndefined();
        expect(interpreterProblem(fromPath, probed({ version: [3, 10, 0] }), 'fromEnvironment')).toBeUndefined();
    });

    it('says how to select an interpreter when it does not exist', () => {
        const error = Object.assign(new Error('spawn nope ENOENT'), { code: 'ENOENT' });
        const message = interpreterProblem({ command: ['nope'], source: 'setting' }, { ok: false, error, stderr: '' }, 'useBundled');
        expect(message).toContain('"nope" (from the setting) was not found');
        expect(message).toContain('Python: Select Interpreter');
        expect(message).toContain('ascend-lsp.interpreter');
    });

    it('rejects a Python older than 3.10 with the fix', () => {
        const message = interpreterProblem(fromPath, probed({ version: [3, 8, 10] }), 'useBundled');
        expect(message).toContain('needs Python 3.10 or newer');
        expect(message).toContain('3.8.10');
    });

    it('tells how to install the server for fromEnvironment', () => {
        const message = interpreterProblem(fromPath, probed({ server: false }), 'fromEnvironment');
        expect(message).toContain('/usr/bin/python3 -m pip install ascend-lsp');
    });

    it('accepts any Python 3.10+ for the bundle: it is pure Python', () => {
        expect(interpreterProblem(fromPath, probed({ version: [3, 14, 0] }), 'useBundled')).toBeUndefined();
    });
});

describe('runProbe', () => {
    it('reads version and packages from a real interpreter', async () => {
        const outcome = await runProbe(probeLaunch(fromPath.command, 'fromEnvironment', process.cwd()), { ...process.env, PYTHONPATH: '' });
        expect(outcome.ok).toBe(true);
        if (outcome.ok) {
            expect(outcome.result.version[0]).toBe(3);
            expect(typeof outcome.result.server).toBe('boolean');
        }
    });

    it("finds the server in the extension's bundled libraries", async () => {
        const extension = fs.mkdtempSync(path.join(os.tmpdir(), 'extension-'));
        fs.mkdirSync(path.join(bundledLibsPath(extension), 'ascend_lsp'), { recursive: true });
        fs.writeFileSync(path.join(bundledLibsPath(extension), 'ascend_lsp', '__init__.py'), '');
        const env = { ...process.env, PYTHONPATH: '' };
        const outcome = await runProbe(probeLaunch(fromPath.command, 'useBundled', extension), env);
        expect(outcome.ok && outcome.result.server).toBe(true);
        fs.rmSync(extension, { recursive: true });
    });

    it('fails cleanly on a missing executable', async () => {
        const outcome = await runProbe(probeLaunch(['/nonexistent/python'], 'useBundled', process.cwd()), process.env);
        expect(outcome.ok).toBe(false);
        expect(interpreterProblem({ command: ['/nonexistent/python'], source: 'setting' }, outcome, 'useBundled')).toContain('was not found');
    });
});

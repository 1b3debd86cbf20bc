import * as path from 'path';
import { describe, expect, it } from 'vitest';
import { bundledLibsPath, bundledStartScript, serverEnvironment, serverLaunch } from '../../src/common/launch';

describe('launch', () => {
    it('runs the server module with the interpreter and its arguments, in the extension folder', () => {
        expect(serverLaunch(['conda', 'run', '-n', 'npu', 'python'], 'fromEnvironment', '/ext')).toEqual({
            command: 'conda',
            args: ['run', '-n', 'npu', 'python', '-m', 'ascend_lsp.lsp.server'],
            cwd: '/ext',
        });
    });

    it("runs the bundle's start script with the bundled strategy", () => {
        expect(bundledLibsPath('/ext')).toBe(path.join('/ext', 'bundled', 'libs'));
        expect(serverLaunch(['python3'], 'useBundled', '/ext')).toEqual({
            command: 'python3',
            args: [bundledStartScript('/ext')],
            cwd: '/ext',
        });
        expect(bundledStartScript('/ext')).toBe(path.join('/ext', 'bundled', 'start_server.py'));
    });

    it("never exports the bundle: the user's PYTHONPATH is passed on as it is", () => {
        const env = serverEnvironment({ PYTHONPATH: '/mine', HOME: '/home/me' });
        expect(env.PYTHONPATH).toBe('/mine');
        expect(env.HOME).toBe('/home/me');
        expect(serverEnvironment({}).PYTHONPATH).toBeUndefined();
    });
});

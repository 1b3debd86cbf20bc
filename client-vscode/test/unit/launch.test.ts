import * as path from 'path';
import { describe, expect, it } from 'vitest';
import { bundledLibsPath, serverCommand, serverEnvironment } from '../../src/common/launch';

describe('launch', () => {
    it('runs the server module with the interpreter and its arguments', () => {
        expect(serverCommand(['conda', 'run', '-n', 'npu', 'python'])).toEqual({
            command: 'conda',
            args: ['run', '-n', 'npu', 'python', '-m', 'ascend_lsp.lsp.server'],
        });
    });

    it('puts the bundled libraries first on PYTHONPATH', () => {
        const libs = bundledLibsPath('/ext');
        expect(libs).toBe(path.join('/ext', 'bundled', 'libs'));
        expect(serverEnvironment({ PYTHONPATH: '/mine' }, 'useBundled', libs).PYTHONPATH).toBe(`${libs}${path.delimiter}/mine`);
        expect(serverEnvironment({}, 'useBundled', libs).PYTHONPATH).toBe(libs);
    });

    it("leaves the user's environment alone with fromEnvironment", () => {
        const env = serverEnvironment({ PYTHONPATH: '/mine', HOME: '/home/me' }, 'fromEnvironment', '/ext/bundled/libs');
        expect(env.PYTHONPATH).toBe('/mine');
        expect(env.HOME).toBe('/home/me');
    });
});

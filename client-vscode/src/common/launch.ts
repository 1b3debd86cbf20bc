/** The command line and environment that start the server. */
import * as path from 'path';
import { SERVER_MODULE } from './constants';
import type { ImportStrategy } from './settings';

export function bundledLibsPath(extensionPath: string): string {
    return path.join(extensionPath, 'bundled', 'libs');
}

export function serverCommand(interpreter: string[]): { command: string; args: string[] } {
    const [command, ...args] = interpreter;
    return { command, args: [...args, '-m', SERVER_MODULE] };
}

/**
 * With the bundled strategy the vendored libraries come first on the path, so an older
 * pygls in the user's environment cannot shadow them; otherwise the environment is left
 * as it is and the interpreter's own ascend-lsp runs.
 */
export function serverEnvironment(base: NodeJS.ProcessEnv, strategy: ImportStrategy, libs: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...base, PYTHONUNBUFFERED: '1' };
    if (strategy === 'useBundled') {
        env.PYTHONPATH = base.PYTHONPATH ? `${libs}${path.delimiter}${base.PYTHONPATH}` : libs;
    }
    return env;
}

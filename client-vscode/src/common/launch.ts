/** The command line and environment that start the server. */
import * as path from 'path';
import { SERVER_MODULE } from './constants';
import type { ImportStrategy } from './settings';

/** The vendored server: bundled/libs, started by bundled/start_server.py (scripts/bundle-server.sh). */
export function bundledLibsPath(extensionPath: string): string {
    return path.join(extensionPath, 'bundled', 'libs');
}

export function bundledStartScript(extensionPath: string): string {
    return path.join(extensionPath, 'bundled', 'start_server.py');
}

/**
 * With the bundled strategy the interpreter runs the bundle's start script, which puts the
 * vendored libraries first on its own sys.path (so an older pygls in the user's environment
 * cannot shadow them) without exporting them: PYTHONPATH is not touched, so the Run-on-NPU
 * worker the server starts imports the user's packages only. Otherwise the interpreter's own
 * ascend-lsp runs.
 */
export function serverCommand(interpreter: string[], strategy: ImportStrategy, extensionPath: string): { command: string; args: string[] } {
    const [command, ...args] = interpreter;
    const entry = strategy === 'useBundled' ? [bundledStartScript(extensionPath)] : ['-m', SERVER_MODULE];
    return { command, args: [...args, ...entry] };
}

export function serverEnvironment(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return { ...base, PYTHONUNBUFFERED: '1' };
}

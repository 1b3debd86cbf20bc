/** The command lines, and the folder, that start the extension's Python processes. */
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

export interface PythonLaunch {
    command: string;
    args: string[];
    cwd: string;
}

/**
 * The interpreter with `pythonArgs`, started in the extension's own folder, never in the
 * workspace: `python -c` and `python -m` put their working directory first on sys.path
 * (Python 3.10 has no -P), so a workspace's json.py or argparse.py would be imported, and an
 * empty PATH entry (or, on Windows, any bare command name) finds programs there too. The
 * server learns the workspace from the LSP's root and folders, not from its working directory.
 */
export function pythonLaunch(interpreter: string[], extensionPath: string, pythonArgs: string[]): PythonLaunch {
    const [command, ...args] = interpreter;
    return { command, args: [...args, ...pythonArgs], cwd: extensionPath };
}

/**
 * With the bundled strategy the interpreter runs the bundle's start script, which puts the
 * vendored libraries first on its own sys.path (so an older pygls in the user's environment
 * cannot shadow them) without exporting them: PYTHONPATH is not touched, so the Run-on-NPU
 * worker the server starts imports the user's packages only. Otherwise the interpreter's own
 * ascend-lsp runs.
 */
export function serverLaunch(interpreter: string[], strategy: ImportStrategy, extensionPath: string): PythonLaunch {
    const entry = strategy === 'useBundled' ? [bundledStartScript(extensionPath)] : ['-m', SERVER_MODULE];
    return pythonLaunch(interpreter, extensionPath, entry);
}

export function serverEnvironment(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return { ...base, PYTHONUNBUFFERED: '1' };
}

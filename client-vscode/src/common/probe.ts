/**
 * Checks an interpreter before the server is started with it, so that a missing or
 * too-old Python, or a server that is not installed, becomes a message that says what to
 * do instead of a language client that dies with a stack trace in the output.
 */
import { execFile } from 'child_process';
import { MIN_PYTHON } from './constants';
import type { Interpreter } from './interpreter';
import { PythonLaunch, bundledLibsPath, pythonLaunch } from './launch';
import type { ImportStrategy } from './settings';

/**
 * Cheap: find_spec locates packages without importing them. The bundled libraries, when
 * given as the first argument, are looked in first, as the bundle's start script does.
 */
export const PROBE_SCRIPT = [
    'import importlib.util as u, json, sys',
    'sys.path[:0] = sys.argv[1:]',
    'print(json.dumps({"version": list(sys.version_info[:3]), "executable": sys.executable,',
    '    "server": u.find_spec("ascend_lsp") is not None}))',
].join('\n');

export interface ProbeResult {
    version: [number, number, number];
    executable: string;
    server: boolean;
}

export type ProbeOutcome = { ok: true; result: ProbeResult } | { ok: false; error: NodeJS.ErrnoException | Error; stderr: string };

/** The probe of `interpreter` for `strategy`, given the bundled libraries when it will use them. */
export function probeLaunch(interpreter: string[], strategy: ImportStrategy, extensionPath: string): PythonLaunch {
    const bundled = strategy === 'useBundled' ? [bundledLibsPath(extensionPath)] : [];
    return pythonLaunch(interpreter, extensionPath, ['-c', PROBE_SCRIPT, ...bundled]);
}

export function runProbe({ command, args, cwd }: PythonLaunch, env: NodeJS.ProcessEnv): Promise<ProbeOutcome> {
    return new Promise((resolve) => {
        execFile(command, args, { env, cwd, timeout: 20_000 }, (error, stdout, stderr) => {
            if (error) {
                resolve({ ok: false, error, stderr });
                return;
            }
            try {
                resolve({ ok: true, result: JSON.parse(stdout.trim().split('\n').pop() ?? '') as ProbeResult });
            } catch {
                resolve({ ok: false, error: new Error(`unexpected output: ${stdout.slice(0, 200)}`), stderr });
            }
        });
    });
}

const SELECT_HINT =
    'Select a Python 3.10+ interpreter with "Python: Select Interpreter", or set "ascend-lsp.interpreter", then run "ascend-lsp: Restart Server".';

/** The reason the server cannot start with this interpreter, with the fix; undefined when it can. */
export function interpreterProblem(interpreter: Interpreter, outcome: ProbeOutcome, strategy: ImportStrategy): string | undefined {
    const shown = interpreter.command.join(' ');
    const origin = interpreter.source === 'PATH' ? 'found on PATH' : `from the ${interpreter.source}`;
    if (!outcome.ok) {
        const code = (outcome.error as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'was not found' : `failed: ${outcome.stderr.trim().split('\n').pop() || outcome.error.message}`;
        return `ascend-lsp: the Python interpreter "${shown}" (${origin}) ${why}. ${SELECT_HINT}`;
    }
    const { version, executable } = outcome.result;
    const [major, minor] = MIN_PYTHON;
    if (version[0] < major || (version[0] === major && version[1] < minor)) {
        return `ascend-lsp needs Python ${major}.${minor} or newer, but "${executable}" is ${version.join('.')}. ${SELECT_HINT}`;
    }
    if (!outcome.result.server) {
        return strategy === 'fromEnvironment'
            ? `ascend-lsp is not installed for "${executable}". Run "${executable} -m pip install ascend-lsp", or set "ascend-lsp.importStrategy" to "useBundled".`
            : 'This build of the extension has no bundled server (run "npm run bundle-server" before packaging). Set "ascend-lsp.importStrategy" to "fromEnvironment" to use an installed ascend-lsp.';
    }
    return undefined;
}

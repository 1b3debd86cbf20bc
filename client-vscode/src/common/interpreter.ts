/**
 * Which Python runs the server: the `ascend-lsp.interpreter` setting, else the
 * interpreter selected in the Python extension, else `python3` from PATH.
 */
import * as path from 'path';

export type InterpreterSource = 'setting' | 'python extension' | 'PATH';

export interface Interpreter {
    /** The executable and its leading arguments. */
    command: string[];
    source: InterpreterSource;
}

export const DEFAULT_PYTHON = 'python3';

/**
 * A relative path in the setting (`.venv/bin/python`) is taken from the workspace `folder`,
 * given only when the workspace is trusted: the processes start in the extension's folder
 * (launch.ts), not in the workspace. A bare name is looked up on PATH.
 */
export function chooseInterpreter(fromSetting: string[], fromPythonExtension: string | undefined, folder?: string): Interpreter {
    if (fromSetting.length > 0) {
        const [executable, ...args] = fromSetting;
        const relative = !path.isAbsolute(executable) && (executable.includes('/') || executable.includes(path.sep));
        return { command: [relative && folder ? path.resolve(folder, executable) : executable, ...args], source: 'setting' };
    }
    if (fromPythonExtension) {
        return { command: [fromPythonExtension], source: 'python extension' };
    }
    return { command: [DEFAULT_PYTHON], source: 'PATH' };
}

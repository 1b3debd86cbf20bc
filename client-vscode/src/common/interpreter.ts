/**
 * Which Python runs the server: the `ascend-lsp.interpreter` setting, else the
 * interpreter selected in the Python extension, else `python3` from PATH.
 */
export type InterpreterSource = 'setting' | 'python extension' | 'PATH';

export interface Interpreter {
    /** The executable and its leading arguments. */
    command: string[];
    source: InterpreterSource;
}

export const DEFAULT_PYTHON = 'python3';

export function chooseInterpreter(fromSetting: string[], fromPythonExtension: string | undefined): Interpreter {
    if (fromSetting.length > 0) {
        return { command: fromSetting, source: 'setting' };
    }
    if (fromPythonExtension) {
        return { command: [fromPythonExtension], source: 'python extension' };
    }
    return { command: [DEFAULT_PYTHON], source: 'PATH' };
}

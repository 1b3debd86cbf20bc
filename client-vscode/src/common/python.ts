/** The interpreter selected in the Python extension (ms-python.python), when it is installed. */
import { PythonExtension } from '@vscode/python-extension';
import { Disposable, Event, EventEmitter, Uri, extensions } from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';
const onDidChangeInterpreterEmitter = new EventEmitter<void>();
/** Fires when the user selects another interpreter in the Python extension. */
export const onDidChangePythonInterpreter: Event<void> = onDidChangeInterpreterEmitter.event;

async function pythonExtensionApi(): Promise<PythonExtension | undefined> {
    if (!extensions.getExtension(PYTHON_EXTENSION_ID)) {
        return undefined; // PythonExtension.api() would throw
    }
    return PythonExtension.api();
}

export async function watchPythonExtension(disposables: Disposable[]): Promise<void> {
    const api = await pythonExtensionApi();
    if (api) {
        disposables.push(
            api.environments.onDidChangeActiveEnvironmentPath(() => onDidChangeInterpreterEmitter.fire()),
        );
    }
}

/** The Python extension's interpreter for `resource`, if it is installed and has one. */
export async function pythonExtensionInterpreter(resource?: Uri): Promise<string | undefined> {
    const api = await pythonExtensionApi();
    if (!api) {
        return undefined;
    }
    const environment = await api.environments.resolveEnvironment(
        api.environments.getActiveEnvironmentPath(resource),
    );
    return environment?.executable.uri?.fsPath;
}

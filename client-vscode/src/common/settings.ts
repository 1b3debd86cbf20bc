/**
 * The extension's settings, and the object the server receives as initializationOptions,
 * in answer to workspace/configuration, and with workspace/didChangeConfiguration.
 *
 * Rule settings are sent only when the user set them: an unset setting must not override
 * `[tool.ascend-lsp]` in the project's pyproject.toml (the server puts client settings on top).
 */
export type Target = 'torch_npu' | 'mindspore';
export type ImportStrategy = 'useBundled' | 'fromEnvironment';

/** VS Code setting → the server's key (the spelling of `[tool.ascend-lsp]`). */
export const RULE_SETTINGS: Readonly<Record<string, string>> = {
    target: 'target',
    torchNpuVersion: 'torch-npu-version',
    mindsporeVersion: 'mindspore-version',
    chip: 'chip',
    select: 'select',
    ignore: 'ignore',
    severity: 'severity',
    docsUrl: 'docs-url',
    fixStyle: 'fix-style',
    tests: 'tests',
};

export interface RunnerSettings {
    target: string;
    timeout: number;
    codeLens: boolean;
    functions: string[];
    interpreter?: string;
    command?: string;
}

export interface ServerSettings {
    [ruleSetting: string]: unknown;
    runner: RunnerSettings;
    /** False in an untrusted workspace: the server must not offer or run "Run on NPU". */
    trusted: boolean;
}

/** What the settings module needs from a WorkspaceConfiguration (a fake in unit tests). */
export interface SettingsSource {
    /** The value the user set at any level, or undefined when only the default applies. */
    explicit(key: string): unknown;
    /** The effective value, defaults included. */
    value<T>(key: string): T | undefined;
}

export function toServerSettings(source: SettingsSource, trusted: boolean): ServerSettings {
    const settings: ServerSettings = {
        runner: {
            target: source.value<string>('runner.target') ?? 'npu',
            timeout: source.value<number>('runner.timeout') ?? 60,
            codeLens: source.value<boolean>('runner.codeLens') ?? true,
            functions: source.value<string[]>('runner.functions') ?? [],
        },
        trusted,
    };
    for (const [name, key] of Object.entries(RULE_SETTINGS)) {
        const value = source.explicit(name);
        if (value !== undefined) {
            settings[key] = value;
        }
    }
    const interpreter = source.value<string>('runner.interpreter')?.trim();
    if (interpreter) {
        settings.runner.interpreter = interpreter;
    }
    const command = source.value<string>('runner.command')?.trim();
    if (command) {
        settings.runner.command = command;
    }
    return settings;
}

export interface LaunchSettings {
    interpreter: string[];
    importStrategy: ImportStrategy;
}

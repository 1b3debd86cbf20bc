/** Reads the extension's settings from the VS Code configuration. */
import { ConfigurationScope, WorkspaceConfiguration, workspace } from 'vscode';
import { SERVER_ID } from './constants';
import { ImportStrategy, LaunchSettings, ServerSettings, SettingsSource, Target, toServerSettings } from './settings';

/** Settings of the extension itself: a change restarts the server. */
export const LAUNCH_SETTINGS = ['interpreter', 'importStrategy'] as const;

export function settingsSource(config: WorkspaceConfiguration): SettingsSource {
    return {
        explicit(key) {
            const inspected = config.inspect(key);
            return (
                inspected?.workspaceFolderValue ??
                inspected?.workspaceValue ??
                inspected?.globalValue
            );
        },
        value: (key) => config.get(key),
    };
}

export function getConfiguration(scope?: ConfigurationScope): WorkspaceConfiguration {
    return workspace.getConfiguration(SERVER_ID, scope);
}

export function getServerSettings(scope?: ConfigurationScope): ServerSettings {
    return toServerSettings(settingsSource(getConfiguration(scope)), workspace.isTrusted);
}

export function getLaunchSettings(scope?: ConfigurationScope): LaunchSettings {
    const config = getConfiguration(scope);
    return {
        interpreter: (config.get<string[]>('interpreter') ?? []).filter((part) => part.trim() !== ''),
        importStrategy: config.get<ImportStrategy>('importStrategy') ?? 'useBundled',
    };
}

export function getTarget(scope?: ConfigurationScope): Target {
    return getConfiguration(scope).get<Target>('target') ?? 'torch_npu';
}

/** What the status bar item says: the target, the server's state and the number of findings. */
import type { Diagnostic } from 'vscode';
import { DIAGNOSTIC_SOURCE, SERVER_ID } from './constants';
import type { ServerState } from './server';
import type { Target } from './settings';

export interface StatusView {
    text: string;
    tooltip: string;
    command: string;
    error: boolean;
}

const TARGET_LABEL: Record<Target, string> = { torch_npu: 'torch_npu', mindspore: 'MindSpore' };

const STATE_ICON: Record<ServerState, string> = {
    starting: '$(loading~spin)',
    running: '$(check)',
    stopped: '$(circle-slash)',
    failed: '$(error)',
};

export function statusView(state: ServerState, target: Target, findings: number): StatusView {
    const icon = state === 'running' && findings > 0 ? '$(warning)' : STATE_ICON[state];
    const label = TARGET_LABEL[target] ?? target;
    const count = state === 'running' && findings > 0 ? ` ${findings}` : '';
    const found = findings === 1 ? '1 finding' : `${findings} findings`;
    return {
        text: `${icon} Ascend: ${label}${count}`,
        tooltip: `ascend-lsp server: ${state}\nTarget: ${label} (click to change)\n${found}`,
        command: state === 'failed' ? `${SERVER_ID}.showOutput` : `${SERVER_ID}.selectTarget`,
        error: state === 'failed',
    };
}

export function countFindings(diagnostics: readonly (readonly Diagnostic[])[]): number {
    let count = 0;
    for (const list of diagnostics) {
        for (const diagnostic of list) {
            if (diagnostic.source === DIAGNOSTIC_SOURCE) {
                count++;
            }
        }
    }
    return count;
}

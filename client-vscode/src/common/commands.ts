/** The extension's commands; "Run on NPU" and "Fix all" forward to the server. */
import {
    CodeAction,
    ConfigurationTarget,
    Disposable,
    LogOutputChannel,
    QuickPickItem,
    Range,
    TextEditor,
    commands,
    window,
    workspace,
} from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient';
import { FIX_ALL_KIND, SERVER_ID } from './constants';
import type { ServerController } from './server';
import { getConfiguration, getTarget } from './configuration';
import type { Target } from './settings';
import type { RunView } from './runView';

/** The server's command that runs a function or a selection (its lenses call it too). */
export const SERVER_RUN_COMMAND = 'ascend-lsp.run';

export function registerCommands(server: ServerController, output: LogOutputChannel, runView: RunView): Disposable[] {
    return [
        commands.registerCommand(`${SERVER_ID}.restart`, () => server.restart()),
        commands.registerCommand(`${SERVER_ID}.showOutput`, () => output.show()),
        commands.registerCommand(`${SERVER_ID}.selectTarget`, selectTarget),
        commands.registerCommand(`${SERVER_ID}.fixAll`, fixAll),
        commands.registerCommand(`${SERVER_ID}.runOnNpu`, () => runOnNpu(server)),
        commands.registerCommand(`${SERVER_ID}.showRunView`, () => runView.reopen(server.running)),
    ];
}

function pythonEditor(): TextEditor | undefined {
    const editor = window.activeTextEditor;
    if (editor?.document.languageId === 'python') {
        return editor;
    }
    void window.showInformationMessage('ascend-lsp: open a Python file or notebook cell first.');
    return undefined;
}

interface TargetItem extends QuickPickItem {
    target: Target;
}

async function selectTarget(): Promise<void> {
    const current = getTarget(window.activeTextEditor?.document.uri);
    const items: TargetItem[] = [
        { label: 'torch_npu', description: 'keep PyTorch, run it on the NPU with torch_npu', target: 'torch_npu' },
        { label: 'MindSpore', description: 'port the code to MindSpore', target: 'mindspore' },
    ];
    for (const item of items) {
        item.picked = item.target === current;
        if (item.picked) {
            item.detail = 'current target';
        }
    }
    const choice = await window.showQuickPick(items, { title: 'ascend-lsp: migration target' });
    if (choice && choice.target !== current) {
        const scope = workspace.workspaceFolders ? ConfigurationTarget.Workspace : ConfigurationTarget.Global;
        await getConfiguration().update('target', choice.target, scope);
    }
}

async function fixAll(): Promise<void> {
    const editor = pythonEditor();
    if (!editor) {
        return;
    }
    const document = editor.document;
    const everything = new Range(0, 0, document.lineCount, 0);
    // The server computes the fix-all edit on resolve: ask for it resolved (the last argument).
    const actions = await commands.executeCommand<CodeAction[]>(
        'vscode.executeCodeActionProvider',
        document.uri,
        everything,
        FIX_ALL_KIND,
        1,
    );
    const edit = actions?.find((action) => action.kind?.value === FIX_ALL_KIND)?.edit;
    if (!edit) {
        void window.showInformationMessage('ascend-lsp: nothing in this file has a safe automatic fix.');
        return;
    }
    await workspace.applyEdit(edit);
}

async function runOnNpu(server: ServerController): Promise<void> {
    if (!workspace.isTrusted) {
        void window.showWarningMessage(
            'ascend-lsp: "Run on NPU" runs code from this workspace, so it is off until you trust the workspace ("Workspaces: Manage Workspace Trust").',
        );
        return;
    }
    const editor = pythonEditor();
    const client = server.running;
    if (!editor) {
        return;
    }
    if (!client) {
        void window.showWarningMessage('ascend-lsp: the server is not running; see "ascend-lsp: Show Output".');
        return;
    }
    const offered = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
    if (!offered.includes(SERVER_RUN_COMMAND)) {
        void window.showWarningMessage(
            `ascend-lsp: this server has no "Run on NPU" (it does not offer the ${SERVER_RUN_COMMAND} command); update ascend-lsp.`,
        );
        return;
    }
    const converter = client.code2ProtocolConverter;
    await client.sendRequest(ExecuteCommandRequest.type, {
        command: SERVER_RUN_COMMAND,
        arguments: [{ uri: converter.asUri(editor.document.uri), range: converter.asRange(editor.selection) }],
    });
}

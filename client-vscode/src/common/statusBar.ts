/** The status bar item; statusText decides what it says. */
import { Disposable, StatusBarAlignment, StatusBarItem, ThemeColor, languages, window } from 'vscode';
import { SERVER_ID } from './constants';
import type { ServerState } from './server';
import type { Target } from './settings';
import { countFindings, statusView } from './statusText';

export class StatusBar implements Disposable {
    private readonly item: StatusBarItem = window.createStatusBarItem(SERVER_ID, StatusBarAlignment.Left, 50);
    private readonly listener: Disposable;
    private state: ServerState = 'stopped';
    private target: Target = 'torch_npu';

    constructor() {
        this.item.name = 'ascend-lsp';
        this.listener = languages.onDidChangeDiagnostics(() => this.render());
        this.render();
        this.item.show();
    }

    update(state: ServerState, target: Target): void {
        this.state = state;
        this.target = target;
        this.render();
    }

    private render(): void {
        const findings = countFindings(languages.getDiagnostics().map(([, list]) => list));
        const view = statusView(this.state, this.target, findings);
        this.item.text = view.text;
        this.item.tooltip = view.tooltip;
        this.item.command = view.command;
        this.item.backgroundColor = view.error ? new ThemeColor('statusBarItem.errorBackground') : undefined;
    }

    dispose(): void {
        this.listener.dispose();
        this.item.dispose();
    }
}

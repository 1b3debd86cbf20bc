/**
 * A per-layer run's page beside the code: a webview panel showing the document the server renders
 * (`ascend-lsp.runView`: the table and the error plot, its script allowed by a nonce), reopened by
 * "Show the Last Layer Run". A click on a mark or a line number opens that line in the editor.
 */
import { Disposable, Range, Uri, ViewColumn, WebviewPanel, window, workspace } from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { OpenLine, PageRef, openLineOf } from './runPage';

export const SERVER_LAYERS_COMMAND = 'ascend-lsp.runLayers';
const SERVER_VIEW_COMMAND = 'ascend-lsp.runView';

interface Page {
    title: string;
    html: string;
}

export class RunView implements Disposable {
    private panel: WebviewPanel | undefined;
    private last: PageRef | undefined;

    /** Fetches `page` from the server and shows it, in the panel beside the code (made once). */
    async show(client: LanguageClient, page: PageRef): Promise<void> {
        const answer: Page = await client.sendRequest(ExecuteCommandRequest.type, {
            command: SERVER_VIEW_COMMAND,
            arguments: [page],
        });
        this.last = page;
        if (!this.panel) {
            this.panel = window.createWebviewPanel(
                'ascend-lsp.runView',
                answer.title,
                { viewColumn: ViewColumn.Beside, preserveFocus: true },
                // The page's own script posts the clicks; it loads nothing (localResourceRoots: none).
                { enableScripts: true, localResourceRoots: [] },
            );
            this.panel.webview.onDidReceiveMessage((message: unknown) => {
                const wanted = openLineOf(message);
                if (wanted) {
                    void openLine(wanted);
                }
            });
            this.panel.onDidDispose(() => {
                this.panel = undefined;
            });
        }
        this.panel.title = answer.title;
        this.panel.webview.html = answer.html;
        this.panel.reveal(undefined, true);
    }

    /** The last page again, as the server has it now. */
    async reopen(client: LanguageClient | undefined): Promise<void> {
        if (!this.last) {
            void window.showInformationMessage('ascend-lsp: no per-layer run yet: use "Run on NPU: find the layer" above a function.');
            return;
        }
        if (!client) {
            void window.showWarningMessage('ascend-lsp: the server is not running; see "ascend-lsp: Show Output".');
            return;
        }
        await this.show(client, this.last);
    }

    dispose(): void {
        this.panel?.dispose();
    }
}

async function openLine(wanted: OpenLine): Promise<void> {
    const document = await workspace.openTextDocument(Uri.file(wanted.path));
    const line = Math.min(wanted.line, document.lineCount) - 1;
    const start = document.lineAt(line).firstNonWhitespaceCharacterIndex;
    await window.showTextDocument(document, { viewColumn: ViewColumn.One, selection: new Range(line, start, line, start) });
}

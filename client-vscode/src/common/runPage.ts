/**
 * What crosses into and out of a run's page: the server's "find the layer" answer, which names
 * the page, and a message from the page's webview, which asks to open a line. Both are checked:
 * the webview runs a document's script, and what it posts is data, never a command.
 */
import { isAbsolute } from 'path';

/** A per-layer run's page on the server: `ascend-lsp.runView`'s argument. */
export interface PageRef {
    uri: string;
    entry: string;
}

/** A line to open: an absolute file path and a 1-based line number. */
export interface OpenLine {
    path: string;
    line: number;
}

function record(value: unknown): Record<string, unknown> | undefined {
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/** The page an `ascend-lsp.runLayers` answer names, if it names one. */
export function pageOfAnswer(answer: unknown): PageRef | undefined {
    const view = record(record(answer)?.view);
    if (typeof view?.uri === 'string' && typeof view.entry === 'string') {
        return { uri: view.uri, entry: view.entry };
    }
    return undefined;
}

/** The line a page's message asks to open: `{type: "open", path, line}`, else undefined. */
export function openLineOf(message: unknown): OpenLine | undefined {
    const data = record(message);
    if (data?.type !== 'open' || typeof data.path !== 'string' || !isAbsolute(data.path)) {
        return undefined;
    }
    const line = data.line;
    return typeof line === 'number' && Number.isInteger(line) && line >= 1 ? { path: data.path, line } : undefined;
}

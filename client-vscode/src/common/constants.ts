/** Names shared by the extension's modules and its package.json. */
export const SERVER_ID = 'ascend-lsp';
export const SERVER_NAME = 'ascend-lsp';
export const SERVER_MODULE = 'ascend_lsp.lsp.server';
/** The `source` of the server's diagnostics. */
export const DIAGNOSTIC_SOURCE = 'ascend-lsp';
export const FIX_ALL_KIND = 'source.fixAll.ascend-lsp';
export const MIN_PYTHON: readonly [number, number] = [3, 10];

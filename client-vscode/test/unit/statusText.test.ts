import { describe, expect, it } from 'vitest';
import type { Diagnostic } from 'vscode';
import { countFindings, statusView } from '../../src/common/statusText';

describe('statusView', () => {
    it('shows the target and the finding count while running', () => {
        const view = statusView('running', 'torch_npu', 12);
        expect(view.text).toBe('$(warning) Ascend: torch_npu 12');
        expect(view.tooltip).toContain('server: running');
        expect(view.tooltip).toContain('12 findings');
        expect(view.command).toBe('ascend-lsp.selectTarget');
    });

    it('names MindSpore and shows a clean state without findings', () => {
        expect(statusView('running', 'mindspore', 0).text).toBe('$(check) Ascend: MindSpore');
    });

    it('points to the output when the server failed', () => {
        const view = statusView('failed', 'torch_npu', 3);
        expect(view.text).toBe('$(error) Ascend: torch_npu');
        expect(view.error).toBe(true);
        expect(view.command).toBe('ascend-lsp.showOutput');
    });

    it('spins while starting', () => {
        expect(statusView('starting', 'torch_npu', 0).text).toContain('$(loading~spin)');
    });
});

describe('countFindings', () => {
    it("counts only the server's diagnostics", () => {
        const ours = { source: 'ascend-lsp' } as Diagnostic;
        const pylance = { source: 'Pylance' } as Diagnostic;
        expect(countFindings([[ours, pylance], [ours], []])).toBe(2);
    });
});

import { describe, expect, it } from 'vitest';
import { RULE_SETTINGS, SettingsSource, toServerSettings } from '../../src/common/settings';
import manifest from '../../package.json';

function source(explicit: Record<string, unknown>, defaults: Record<string, unknown> = {}): SettingsSource {
    return {
        explicit: (key) => explicit[key],
        value: <T>(key: string) => (key in explicit ? explicit[key] : defaults[key]) as T | undefined,
    };
}

describe('toServerSettings', () => {
    it('sends only the rule settings the user set, in the pyproject spelling', () => {
        const settings = toServerSettings(source({ target: 'mindspore', torchNpuVersion: '2.6.0', ignore: ['NPU4'] }), true);
        expect(settings).toEqual({
            target: 'mindspore',
            'torch-npu-version': '2.6.0',
            ignore: ['NPU4'],
            runner: { target: 'npu', timeout: 60, codeLens: true, functions: [] },
            trusted: true,
        });
    });

    it('sends the fix style as fix-style', () => {
        expect(toServerSettings(source({ fixStyle: 'portable' }), true)['fix-style']).toBe('portable');
    });

    it('sends the tests setting as tests', () => {
        expect(toServerSettings(source({ tests: 'check' }), true)['tests']).toBe('check');
    });

    it('leaves unset rule settings to pyproject.toml', () => {
        const settings = toServerSettings(source({}, { target: 'torch_npu', chip: 'A2' }), true);
        expect(Object.keys(settings).sort()).toEqual(['runner', 'trusted']);
    });

    it('carries the runner settings and drops empty interpreter and command', () => {
        const runner = toServerSettings(
            source({ 'runner.target': 'emulate', 'runner.timeout': 5, 'runner.codeLens': false, 'runner.interpreter': ' ', 'runner.command': 'ssh npu python3 -c {bootstrap_quoted}' }),
            true,
        ).runner;
        expect(runner).toEqual({ target: 'emulate', timeout: 5, codeLens: false, functions: [], command: 'ssh npu python3 -c {bootstrap_quoted}' });
    });

    it('tells the server when the workspace is untrusted', () => {
        expect(toServerSettings(source({}), false).trusted).toBe(false);
    });
});

describe('package.json', () => {
    const properties = Object.keys(manifest.contributes.configuration.properties);

    it('contributes every setting the mapping reads', () => {
        for (const name of [...Object.keys(RULE_SETTINGS), 'interpreter', 'importStrategy', 'runner.target', 'runner.timeout', 'runner.codeLens', 'runner.interpreter', 'runner.command']) {
            expect(properties).toContain(`ascend-lsp.${name}`);
        }
    });

    it('restricts every setting that chooses what runs', () => {
        const restricted = manifest.capabilities.untrustedWorkspaces.restrictedConfigurations;
        expect(restricted.every((name) => properties.includes(name))).toBe(true);
        expect(restricted).toEqual(expect.arrayContaining(['ascend-lsp.interpreter', 'ascend-lsp.runner.interpreter', 'ascend-lsp.runner.command']));
    });

    it('declares every command it contributes to a menu', () => {
        const declared = manifest.contributes.commands.map((c) => c.command);
        for (const entries of Object.values(manifest.contributes.menus)) {
            for (const entry of entries) {
                expect(declared).toContain(entry.command);
            }
        }
    });
});

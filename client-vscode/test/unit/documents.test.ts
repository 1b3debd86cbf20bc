import { describe, expect, it } from 'vitest';
import { DOCUMENT_SELECTOR, LAUNCH_SCRIPT_FILES, PACKAGING_FILES } from '../../src/common/documents';
import manifest from '../../package.json';

describe('DOCUMENT_SELECTOR', () => {
    it('sends Python, shell scripts, Dockerfiles, YAML, JSON and compose files by their language id, and packaging and sbatch files by name', () => {
        expect(DOCUMENT_SELECTOR.filter((filter) => filter.language)).toEqual([
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
            { scheme: 'vscode-notebook-cell', language: 'python' },
            { scheme: 'file', language: 'shellscript' },
            { scheme: 'untitled', language: 'shellscript' },
            { scheme: 'file', language: 'dockerfile' },
            { scheme: 'untitled', language: 'dockerfile' },
            { scheme: 'file', language: 'yaml' },
            { scheme: 'untitled', language: 'yaml' },
            { scheme: 'file', language: 'json' },
            { scheme: 'untitled', language: 'json' },
            { scheme: 'file', language: 'jsonc' },
            { scheme: 'untitled', language: 'jsonc' },
            { scheme: 'file', language: 'dockercompose' },
            { scheme: 'untitled', language: 'dockercompose' },
        ]);
        expect(DOCUMENT_SELECTOR.filter((filter) => filter.pattern)).toEqual(
            [...PACKAGING_FILES, ...LAUNCH_SCRIPT_FILES].map((pattern) => ({ scheme: 'file', pattern })),
        );
        expect(LAUNCH_SCRIPT_FILES).toEqual(['**/*.sbatch', '**/*.slurm']);
    });

    it('starts the extension when a shell script or a Dockerfile opens', () => {
        expect(manifest.activationEvents).toContain('onLanguage:shellscript');
        expect(manifest.activationEvents).toContain('onLanguage:dockerfile');
        expect(manifest.activationEvents).toContain('onLanguage:dockercompose');
    });
});

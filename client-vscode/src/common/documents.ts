/**
 * Which documents the client sends the server: Python (files, untitled, notebook cells), the
 * packaging files, Dockerfiles and the shell launch scripts it checks too (docs/packaging-and-chips.md);
 * a Dockerfile of any other name comes with the dockerfile language id. YAML and JSON documents
 * (and compose files) go too: the server reads one only when its keys make it a training config.
 * No `vscode` import, so the unit tests read the same list the client uses.
 */

/** Packaging files, by name. */
export const PACKAGING_FILES = [
    '**/requirements*.txt',
    '**/requirements/*.txt',
    '**/pyproject.toml',
    '**/setup.cfg',
    '**/environment.yml',
    '**/environment.yaml',
    '**/Dockerfile',
    '**/*.Dockerfile',
    '**/*.dockerfile',
    '**/Containerfile',
    '**/Dockerfile.*',
];

/**
 * Launch scripts VS Code may not call shellscript by name (sbatch and Slurm files); the rest,
 * `*.sh` and files whose `#!` names a shell, come with the shellscript language id.
 */
export const LAUNCH_SCRIPT_FILES = ['**/*.sbatch', '**/*.slurm'];

/** Config and compose documents, by language id (the server decides from the keys what a config is). */
export const CONFIG_LANGUAGES = ['yaml', 'json', 'jsonc', 'dockercompose'];

export interface DocumentFilter {
    scheme: string;
    language?: string;
    pattern?: string;
}

export const DOCUMENT_SELECTOR: DocumentFilter[] = [
    { scheme: 'file', language: 'python' },
    { scheme: 'untitled', language: 'python' },
    { scheme: 'vscode-notebook-cell', language: 'python' },
    { scheme: 'file', language: 'shellscript' },
    { scheme: 'untitled', language: 'shellscript' },
    { scheme: 'file', language: 'dockerfile' },
    { scheme: 'untitled', language: 'dockerfile' },
    ...CONFIG_LANGUAGES.flatMap((language) => [
        { scheme: 'file', language },
        { scheme: 'untitled', language },
    ]),
    ...[...PACKAGING_FILES, ...LAUNCH_SCRIPT_FILES].map((pattern) => ({ scheme: 'file', pattern })),
];

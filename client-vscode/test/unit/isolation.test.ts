/**
 * A workspace is untrusted data: no Python the extension starts may import a module from it
 * or run a program from it. The workspace here plants the modules the probe and the server
 * import (json, argparse, runpy, ...) and a fake ascend_lsp, each of which leaves a marker
 * when imported, and the real command lines are started as the extension starts them, with
 * the workspace as the editor's own working directory (as after `code .`).
 */
import { ChildProcessWithoutNullStreams, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bundledLibsPath, bundledStartScript, serverEnvironment, serverLaunch } from '../../src/common/launch';
import { chooseInterpreter } from '../../src/common/interpreter';
import { interpreterProblem, probeLaunch, runProbe } from '../../src/common/probe';
import type { ImportStrategy } from '../../src/common/settings';

const CLIENT = path.resolve(__dirname, '..', '..');
const SERVER_SOURCES = path.resolve(CLIENT, '..', 'server');
const STRATEGIES: ImportStrategy[] = ['useBundled', 'fromEnvironment'];

/** A Python with the server's dependencies (pygls): $TEST_PYTHON, else the repository's venv (`make test`). */
function serverPython(): string | undefined {
    const candidate = process.env.TEST_PYTHON || path.resolve(CLIENT, '..', '.venv', 'bin', 'python');
    try {
        execFileSync(candidate, ['-c', 'import pygls']);
        return candidate;
    } catch {
        return undefined;
    }
}
const SERVER_PYTHON = serverPython();

/** Modules and packages that Python, the probe or the server imports, at start-up or later. */
const PLANTED_MODULES = ['json', 'argparse', 'runpy', 'site', 'sitecustomize', 'typing'];
const PLANTED_PACKAGES = ['logging', 'encodings', 'ascend_lsp', 'pygls'];

let root: string;
let workspace: string;
let markers: string;
let extension: string;
let editorCwd: string;
let planted: string[];

/** Code that records the import of `name` and then fails. */
function importMarker(name: string): string {
    return `open(${JSON.stringify(path.join(markers, name))}, "w").close()\nraise SystemExit("imported the workspace's ${name}")\n`;
}

function listing(folder: string): string[] {
    return (fs.readdirSync(folder, { recursive: true }) as string[]).sort();
}

beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'isolation-'));
    workspace = path.join(root, 'workspace');
    markers = path.join(root, 'markers');
    // The installed extension's layout: the start script beside libs holding this checkout's server.
    extension = path.join(root, 'extension');
    fs.mkdirSync(workspace);
    fs.mkdirSync(markers);
    fs.mkdirSync(bundledLibsPath(extension), { recursive: true });
    fs.copyFileSync(path.join(CLIENT, 'scripts', 'start_server.py'), bundledStartScript(extension));
    fs.symlinkSync(path.join(SERVER_SOURCES, 'ascend_lsp'), path.join(bundledLibsPath(extension), 'ascend_lsp'));
    for (const name of PLANTED_MODULES) {
        fs.writeFileSync(path.join(workspace, `${name}.py`), importMarker(name));
    }
    for (const name of PLANTED_PACKAGES) {
        fs.mkdirSync(path.join(workspace, name));
        fs.writeFileSync(path.join(workspace, name, '__init__.py'), importMarker(name));
    }
    planted = listing(workspace);
    editorCwd = process.cwd();
    process.chdir(workspace);
});

afterEach(() => {
    process.chdir(editorCwd);
    fs.rmSync(root, { recursive: true, force: true });
});

/** The editor's environment; fromEnvironment finds this checkout's server through PYTHONPATH. */
function environment(strategy: ImportStrategy): NodeJS.ProcessEnv {
    return serverEnvironment({ ...process.env, PYTHONPATH: strategy === 'fromEnvironment' ? SERVER_SOURCES : '' });
}

/** A program at `relative` in the workspace that leaves a marker when it runs. */
function plantProgram(relative: string): void {
    const file = path.join(workspace, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `#!/bin/sh\n: > ${JSON.stringify(path.join(markers, path.basename(file)))}\nexit 3\n`, { mode: 0o755 });
    planted = listing(workspace);
}

/**
 * Plants a `python3`, and returns `env` with an empty PATH entry in front (before
 * `pythonFolder`), as `PATH=$EXTRA:$PATH` leaves with EXTRA unset: it means the working directory.
 */
function plantPython3(env: NodeJS.ProcessEnv, pythonFolder?: string): NodeJS.ProcessEnv {
    plantProgram('python3');
    return { ...env, PATH: ['', ...(pythonFolder ? [pythonFolder] : []), env.PATH].join(path.delimiter) };
}

function expectWorkspaceUntouched(): void {
    expect(fs.readdirSync(markers)).toEqual([]);
    expect(listing(workspace)).toEqual(planted); // no __pycache__ either
}

describe('the interpreter probe', () => {
    it.each(STRATEGIES)('imports nothing from the workspace (%s)', async (strategy) => {
        const outcome = await runProbe(probeLaunch(['python3'], strategy, extension), environment(strategy));
        expect(outcome.ok ? '' : outcome.stderr).toBe('');
        expect(outcome.ok && outcome.result.server).toBe(true);
        expectWorkspaceUntouched();
    });

    it("does not take the workspace's ascend_lsp for an installed server", async () => {
        // A Python that certainly has no ascend-lsp: a fresh venv without pip. Without json.py
        // the probe runs to its end whatever its working directory.
        fs.rmSync(path.join(workspace, 'json.py'));
        planted = listing(workspace);
        const venv = path.join(root, 'venv');
        execFileSync('python3', ['-m', 'venv', '--without-pip', venv], { cwd: root });
        const interpreter = [path.join(venv, 'bin', 'python')];
        const env = serverEnvironment({ ...process.env, PYTHONPATH: '' });
        const outcome = await runProbe(probeLaunch(interpreter, 'fromEnvironment', extension), env);
        expect(outcome.ok && outcome.result.server).toBe(false);
        expect(interpreterProblem({ command: interpreter, source: 'setting' }, outcome, 'fromEnvironment')).toMatch(
            /^ascend-lsp is not installed for ".*"\. Run ".* -m pip install ascend-lsp"/,
        );
        expectWorkspaceUntouched();
    });

    it('runs no python3 of the workspace found through an empty PATH entry', async () => {
        const outcome = await runProbe(probeLaunch(['python3'], 'useBundled', extension), plantPython3(environment('useBundled')));
        expectWorkspaceUntouched();
        expect(outcome.ok && outcome.result.server).toBe(true);
    });

    it('runs no interpreter of an untrusted workspace named by a relative path in the setting', async () => {
        plantProgram(path.join('.venv', 'bin', 'python'));
        // What server.ts passes for an untrusted workspace: no folder to take the path from.
        const interpreter = chooseInterpreter(['.venv/bin/python'], undefined, undefined);
        const outcome = await runProbe(probeLaunch(interpreter.command, 'useBundled', extension), environment('useBundled'));
        expectWorkspaceUntouched();
        expect(interpreterProblem(interpreter, outcome, 'useBundled')).toMatch(/^ascend-lsp: the Python interpreter "\.venv\/bin\/python" \(from the setting\) was not found\./);
    });
});

type Answer = { result?: unknown; error?: unknown };

/** Sends LSP messages to a server over stdio and collects its answers by id. */
class StdioClient {
    private buffer = Buffer.alloc(0);
    private readonly answers = new Map<number, (answer: Answer) => void>();
    private stderr = '';
    readonly exited: Promise<number | null>;

    constructor(private readonly child: ChildProcessWithoutNullStreams) {
        child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
        child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
        child.stdin.on('error', () => undefined); // writing to a server that died: request() reports its exit
        this.exited = new Promise((resolve) => child.once('exit', resolve));
    }

    /** The answer, or an error with the server's stderr when it exits first. */
    request(id: number, method: string, params: unknown): Promise<Answer> {
        const answered = new Promise<Answer>((resolve) => this.answers.set(id, resolve));
        const died = this.exited.then((code) => {
            throw new Error(`the server exited (${code}) before answering ${method}: ${this.stderr}`);
        });
        this.send({ jsonrpc: '2.0', id, method, params });
        return Promise.race([answered, died]);
    }

    send(message: object): void {
        const body = JSON.stringify(message);
        this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    }

    private receive(chunk: Buffer): void {
        this.buffer = Buffer.concat([this.buffer, chunk]);
        for (;;) {
            const end = this.buffer.indexOf('\r\n\r\n');
            const length = end < 0 ? undefined : /Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1];
            if (length === undefined || this.buffer.length < end + 4 + Number(length)) {
                return;
            }
            const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + Number(length)).toString());
            this.buffer = this.buffer.subarray(end + 4 + Number(length));
            this.answers.get(message.id)?.(message);
        }
    }
}

/**
 * What the extension does at start: probe the interpreter, then start the server as the
 * language client does (command, arguments, cwd, env); here it is also asked to initialize.
 */
async function startAsTheExtension(interpreter: string[], strategy: ImportStrategy, env: NodeJS.ProcessEnv): Promise<Answer> {
    const outcome = await runProbe(probeLaunch(interpreter, strategy, extension), env);
    const problem = interpreterProblem({ command: interpreter, source: 'setting' }, outcome, strategy);
    if (problem !== undefined) {
        throw new Error(problem);
    }
    const launch = serverLaunch(interpreter, strategy, extension);
    const client = new StdioClient(spawn(launch.command, launch.args, { cwd: launch.cwd, env }));
    try {
        const uri = pathToFileURL(workspace).href;
        return await client.request(1, 'initialize', {
            processId: process.pid,
            rootUri: uri,
            capabilities: {},
            workspaceFolders: [{ uri, name: 'workspace' }],
        });
    } finally {
        await client.request(2, 'shutdown', null).catch(() => undefined);
        client.send({ jsonrpc: '2.0', method: 'exit' });
        await client.exited;
    }
}

function serverName(answer: Answer): string | undefined {
    expect(answer.error).toBeUndefined();
    return (answer.result as { serverInfo?: { name?: string } }).serverInfo?.name;
}

describe.skipIf(SERVER_PYTHON === undefined)('the server', () => {
    it.each(STRATEGIES)('starts and answers initialize without importing the workspace (%s)', async (strategy) => {
        const answer = await startAsTheExtension([SERVER_PYTHON!], strategy, environment(strategy));
        expectWorkspaceUntouched();
        expect(serverName(answer)).toBe('ascend-lsp');
    }, 60_000);

    it.each(STRATEGIES)('starts with no python3 of the workspace found through an empty PATH entry (%s)', async (strategy) => {
        const env = plantPython3(environment(strategy), path.dirname(SERVER_PYTHON!));
        const answer = await startAsTheExtension(['python3'], strategy, env);
        expectWorkspaceUntouched();
        expect(serverName(answer)).toBe('ascend-lsp');
    }, 60_000);
});

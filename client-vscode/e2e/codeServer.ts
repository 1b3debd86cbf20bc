/** Installs the .vsix into a private code-server and serves a workspace on a free loopback port. */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';

export interface CodeServerPaths {
    /** code-server's launcher (from the npm package). */
    binary: string;
    /** The bin folder of Node 24, which code-server needs. */
    nodeBin: string;
    /** Everything code-server writes: user data, extensions, config, log. */
    home: string;
}

export interface RunningCodeServer {
    url: string;
    process: ChildProcess;
    log: string;
    stop(): Promise<void>;
}

function environment(paths: CodeServerPaths): NodeJS.ProcessEnv {
    return { ...process.env, PATH: `${paths.nodeBin}${path.delimiter}${process.env.PATH ?? ''}` };
}

function commonArgs(paths: CodeServerPaths): string[] {
    return [
        '--user-data-dir', path.join(paths.home, 'user-data'),
        '--extensions-dir', path.join(paths.home, 'extensions'),
        '--config', path.join(paths.home, 'config.yaml'),
    ];
}

export function installExtension(paths: CodeServerPaths, vsix: string): void {
    fs.writeFileSync(path.join(paths.home, 'config.yaml'), 'auth: none\n');
    const result = spawnSync(paths.binary, [...commonArgs(paths), '--install-extension', vsix, '--force'], {
        env: environment(paths),
        encoding: 'utf8',
    });
    if (result.status !== 0) {
        throw new Error(`code-server --install-extension failed (${result.status}): ${result.stderr}${result.stdout}`);
    }
}

/** Settings that keep the workbench free of prompts that would cover the editor. */
export function writeUserSettings(paths: CodeServerPaths, settings: Record<string, unknown>): void {
    const folder = path.join(paths.home, 'user-data', 'User');
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'settings.json'), JSON.stringify(settings, null, 4));
}

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address() as net.AddressInfo;
            server.close(() => resolve(port));
        });
    });
}

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
        if (child.exitCode !== null) {
            throw new Error(`code-server exited with ${child.exitCode}`);
        }
        try {
            const response = await fetch(url);
            if (response.ok) {
                return;
            }
        } catch {
            // not listening yet
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`code-server did not answer on ${url} within ${timeoutMs} ms`);
}

export async function startCodeServer(paths: CodeServerPaths, extraEnv: NodeJS.ProcessEnv = {}): Promise<RunningCodeServer> {
    const port = await freePort();
    const log = path.join(paths.home, 'code-server.log');
    const out = fs.openSync(log, 'w');
    const child = spawn(
        paths.binary,
        [
            ...commonArgs(paths),
            '--bind-addr', `127.0.0.1:${port}`,
            '--auth', 'none',
            '--disable-telemetry',
            '--disable-update-check',
            '--disable-workspace-trust',
        ],
        { env: { ...environment(paths), ...extraEnv }, stdio: ['ignore', out, out], detached: true },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp(`${url}/healthz`, child, 60_000);
    return {
        url,
        process: child,
        log,
        stop: () =>
            new Promise((resolve) => {
                if (child.exitCode !== null) {
                    resolve();
                    return;
                }
                child.once('exit', () => resolve());
                // Its own process group: the extension host and the language server go too.
                process.kill(-child.pid!, 'SIGTERM');
                setTimeout(() => child.exitCode === null && process.kill(-child.pid!, 'SIGKILL'), 5000).unref();
            }),
    };
}

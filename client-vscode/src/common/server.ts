/**
 * Starts, restarts and stops the language client: checks the interpreter first, restarts
 * a crashed server a few times, and says what to do when it gives up.
 */
import { Disposable, EventEmitter, LogOutputChannel, Uri, commands, window, workspace } from 'vscode';
import { State } from 'vscode-languageclient';
import {
    CloseAction,
    ErrorAction,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
} from 'vscode-languageclient/node';
import { SERVER_ID, SERVER_NAME } from './constants';
import { DOCUMENT_SELECTOR } from './documents';
import { serverEnvironment, serverLaunch } from './launch';
import { interpreterProblem, probeLaunch, runProbe } from './probe';
import { chooseInterpreter } from './interpreter';
import { pythonExtensionInterpreter } from './python';
import { RestartBudget } from './restartBudget';
import { getLaunchSettings, getServerSettings } from './configuration';
import { pageOfAnswer } from './runPage';
import { RunView, SERVER_LAYERS_COMMAND } from './runView';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

const CRASH_RESTARTS = 4;
const CRASH_WINDOW_MS = 3 * 60_000;

export class ServerController implements Disposable {
    private client: LanguageClient | undefined;
    private clientListener: Disposable | undefined;
    private pending: Promise<void> = Promise.resolve();
    private readonly budget = new RestartBudget(CRASH_RESTARTS, CRASH_WINDOW_MS);
    private readonly stateEmitter = new EventEmitter<ServerState>();
    readonly onDidChangeState = this.stateEmitter.event;
    state: ServerState = 'stopped';

    constructor(
        private readonly extensionPath: string,
        private readonly output: LogOutputChannel,
        private readonly runView: RunView,
    ) {}

    /** The client while the server runs. */
    get running(): LanguageClient | undefined {
        return this.client?.state === State.Running ? this.client : undefined;
    }

    /** Restarts are queued, so a settings change during a start cannot run two servers. */
    restart(): Promise<void> {
        this.pending = this.pending.then(() =>
            this.start().catch((error) => this.fail(`ascend-lsp: the server could not be started: ${describe(error)}`)),
        );
        return this.pending;
    }

    async dispose(): Promise<void> {
        await this.pending;
        await this.stopClient();
        this.stateEmitter.dispose();
    }

    private async start(): Promise<void> {
        await this.stopClient();
        this.budget.reset();
        this.setState('starting');
        const folder = workspace.workspaceFolders?.[0];
        const launch = getLaunchSettings(folder);
        const interpreter = chooseInterpreter(
            launch.interpreter,
            await pythonExtensionInterpreter(folder?.uri),
            workspace.isTrusted ? folder?.uri.fsPath : undefined,
        );
        const env = serverEnvironment(process.env);
        const outcome = await runProbe(probeLaunch(interpreter.command, launch.importStrategy, this.extensionPath), env);
        const problem = interpreterProblem(interpreter, outcome, launch.importStrategy);
        if (problem !== undefined || !outcome.ok) {
            // interpreterProblem describes every failed probe; the second test narrows the type.
            this.fail(problem ?? 'ascend-lsp: the interpreter check failed.');
            return;
        }
        const { executable, version } = outcome.result;
        this.output.info(
            `Starting the server with ${executable} (Python ${version.join('.')}, interpreter from the ${interpreter.source}, ${launch.importStrategy})`,
        );
        const { command, args, cwd } = serverLaunch(interpreter.command, launch.importStrategy, this.extensionPath);
        const serverOptions: ServerOptions = { command, args, options: { cwd, env } };
        const client = new LanguageClient(SERVER_ID, SERVER_NAME, serverOptions, this.clientOptions(folder?.uri));
        this.client = client;
        this.clientListener = client.onDidChangeState((event) => {
            if (this.client === client && this.state !== 'failed') {
                this.setState(event.newState === State.Running ? 'running' : event.newState === State.Starting ? 'starting' : 'stopped');
            }
        });
        try {
            await client.start();
        } catch (error) {
            this.fail(`ascend-lsp: the server did not start (${describe(error)}). The output shows its log.`);
        }
    }

    private clientOptions(root: Uri | undefined): LanguageClientOptions {
        return {
            documentSelector: DOCUMENT_SELECTOR,
            outputChannel: this.output,
            traceOutputChannel: this.output,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: getServerSettings(root),
            errorHandler: {
                error: (_error, _message, count) => ({
                    action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
                }),
                closed: () => {
                    if (this.budget.allow()) {
                        this.output.warn('The server stopped unexpectedly; restarting it.');
                        return { action: CloseAction.Restart, handled: true };
                    }
                    this.fail(
                        `The ascend-lsp server stopped ${CRASH_RESTARTS + 1} times within 3 minutes and is not restarted again. The output shows why; fix that, then run "ascend-lsp: Restart Server".`,
                    );
                    return { action: CloseAction.DoNotRestart, handled: true };
                },
            },
            middleware: {
                workspace: {
                    // The server asks for section "ascend-lsp": answer with the server's view of it.
                    configuration: async (params, token, next) => {
                        const values = await next(params, token);
                        if (!Array.isArray(values)) {
                            return values;
                        }
                        return params.items.map((item, index) =>
                            item.section === SERVER_ID
                                ? getServerSettings(item.scopeUri ? Uri.parse(item.scopeUri) : root)
                                : values[index],
                        );
                    },
                },
                // "Find the layer" (a lens or a command) names its page in the answer: show it beside the code.
                executeCommand: async (command, args, next) => {
                    const answer: unknown = await next(command, args);
                    const page = command === SERVER_LAYERS_COMMAND ? pageOfAnswer(answer) : undefined;
                    const client = this.running;
                    if (page && client) {
                        this.runView.show(client, page).catch((error) => this.output.warn(`The run's page: ${describe(error)}`));
                    }
                    return answer;
                },
                // Code in an untrusted workspace never runs, whatever the server offers.
                provideCodeLenses: (document, token, next) => (workspace.isTrusted ? next(document, token) : []),
            },
        };
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.clientListener?.dispose();
        if (client?.needsStop()) {
            try {
                await client.stop();
            } catch (error) {
                this.output.warn(`Stopping the server: ${describe(error)}`);
            }
        }
        this.setState('stopped');
    }

    private fail(message: string): void {
        this.setState('failed');
        this.output.error(message);
        void window.showErrorMessage(message, 'Show Output', 'Restart Server').then((choice) => {
            if (choice === 'Show Output') {
                this.output.show();
            } else if (choice === 'Restart Server') {
                void commands.executeCommand(`${SERVER_ID}.restart`);
            }
        });
    }

    private setState(state: ServerState): void {
        if (state !== this.state) {
            this.state = state;
            this.stateEmitter.fire(state);
        }
    }
}

function describe(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

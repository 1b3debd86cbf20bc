/** Activation: the output channel, the status bar, the commands, and the server. */
import { ConfigurationChangeEvent, ExtensionContext, window, workspace } from 'vscode';
import { DidChangeConfigurationNotification } from 'vscode-languageclient';
import { registerCommands } from './common/commands';
import { SERVER_ID, SERVER_NAME } from './common/constants';
import { onDidChangePythonInterpreter, watchPythonExtension } from './common/python';
import { ServerController } from './common/server';
import { LAUNCH_SETTINGS, getServerSettings, getTarget } from './common/configuration';
import { StatusBar } from './common/statusBar';
import { RunView } from './common/runView';

let server: ServerController | undefined;

export async function activate(context: ExtensionContext): Promise<void> {
    const output = window.createOutputChannel(SERVER_NAME, { log: true });
    const runView = new RunView();
    server = new ServerController(context.extensionPath, output, runView);
    const controller = server;
    const status = new StatusBar();
    const showStatus = () => status.update(controller.state, getTarget(workspace.workspaceFolders?.[0]));

    // Everything but how the server is started reaches the running server as a settings change.
    const sendSettings = async () => {
        showStatus();
        await controller.running?.sendNotification(DidChangeConfigurationNotification.type, {
            settings: { [SERVER_ID]: getServerSettings(workspace.workspaceFolders?.[0]) },
        });
    };

    context.subscriptions.push(
        output,
        status,
        runView,
        controller.onDidChangeState(showStatus),
        ...registerCommands(controller, output, runView),
        workspace.onDidChangeConfiguration(async (event: ConfigurationChangeEvent) => {
            if (LAUNCH_SETTINGS.some((name) => event.affectsConfiguration(`${SERVER_ID}.${name}`))) {
                await controller.restart();
            } else if (event.affectsConfiguration(SERVER_ID)) {
                await sendSettings();
            }
        }),
        workspace.onDidGrantWorkspaceTrust(async () => {
            // Workspace values of the restricted settings apply from now on.
            await controller.restart();
        }),
        onDidChangePythonInterpreter(() => controller.restart()),
    );
    showStatus();
    await watchPythonExtension(context.subscriptions);
    await controller.restart();
}

export async function deactivate(): Promise<void> {
    await server?.dispose();
}

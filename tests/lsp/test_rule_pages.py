"""Where diagnostics link their rule pages (`docs-url`), and the pages without the network:
a hover on a rule code shows the whole page, and "packaged" links to the installed copies."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ascend_lsp import DOCS_URL
from ascend_lsp.engine.config import ConfigError, from_mapping
from ascend_lsp.rules import RULE_SET
from ascend_lsp.rules.pages import packaged_page, rule_url


from .helpers import CLIENTS, TIMEOUT, diagnostics, open_document, pulled_and_shown, server_config, start

CUDA = "import torch\n\ntorch.cuda.synchronize()  # noqa: NPU102\n"


@pytest_lsp.fixture(params=CLIENTS, config=server_config(ASCEND_LSP_DOCS_URL=""))
async def client(lsp_client: LanguageClient, request):
    lsp_client.name = request.param
    yield
    await lsp_client.shutdown_session()


def test_rule_url_forms(monkeypatch) -> None:
    monkeypatch.delenv("ASCEND_LSP_DOCS_URL", raising=False)
    assert rule_url("NPU102") == DOCS_URL.format(code="NPU102")
    assert rule_url("NPU102", "https://mirror.example/r/{code}.html") == "https://mirror.example/r/NPU102.html"
    assert rule_url("NPU102", "https://mirror.example/rules/") == "https://mirror.example/rules/NPU102.md"
    monkeypatch.setenv("ASCEND_LSP_DOCS_URL", "https://intranet.example/{code}")
    assert rule_url("NPU102") == "https://intranet.example/NPU102"
    assert rule_url("NPU102", "https://setting.example/{code}") == "https://setting.example/NPU102"  # the setting wins
    packaged = rule_url("NPU102", "packaged")
    assert packaged.startswith("file://") and Path(unquote(urlparse(packaged).path)).is_file()
    assert packaged_page("NPU102").read_text(encoding="utf-8").startswith("# NPU102: ")


def test_docs_url_setting_is_checked() -> None:
    assert from_mapping({"docs-url": " https://m.example/{code} "}, RULE_SET.prefixes).docs_url == "https://m.example/{code}"
    with pytest.raises(ConfigError, match="docs-url"):
        from_mapping({"docs-url": ""}, RULE_SET.prefixes)
    with pytest.raises(ConfigError, match="docs-url"):
        from_mapping({"docs-url": 3}, RULE_SET.prefixes)
    assert from_mapping({"docs-url": "HTTP://m.example/"}, RULE_SET.prefixes).docs_url == "HTTP://m.example/"
    assert from_mapping({"docs-url": "file:///srv/rules/{code}.md"}, RULE_SET.prefixes).docs_url == "file:///srv/rules/{code}.md"
    for address in ("command:workbench.action.terminal.new", "vscode://file/x", "javascript:alert(1)",
                    "mirror.example/rules", "{code}:x", "http://[broken"):
        with pytest.raises(ConfigError, match="`docs-url` must be an http, https or file address"):
            from_mapping({"docs-url": address}, RULE_SET.prefixes)


# A link the editor opens: a `command:` URI would run a command of the editor's choosing.
COMMAND = "command:workbench.action.terminal.new"


def diagnosed(tmp_path: Path, env: dict[str, str] | None = None, options: dict | None = None) -> tuple[list, list]:
    """(hrefs of the diagnostics of a file with a finding, the server's showMessage texts)."""
    items, messages = pulled_and_shown(tmp_path, CUDA, {"ASCEND_LSP_DOCS_URL": "", **(env or {})}, options)
    return [d["codeDescription"]["href"] for d in items], messages


def lsp_check(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    (folder / "a.py").write_text(CUDA, encoding="utf-8")
    return subprocess.run([sys.executable, "-c", "import sys; from ascend_lsp.cli.main import main; sys.exit(main())",
                           "--no-cache", "a.py"], cwd=folder, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=60)


def test_a_command_uri_in_pyproject_is_refused(tmp_path) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.ascend-lsp]\ndocs-url = "{COMMAND}"\n', encoding="utf-8")
    hrefs, messages = diagnosed(tmp_path)
    assert hrefs == [DOCS_URL.format(code="NPU103")]
    refused = (f"{tmp_path / 'pyproject.toml'}: `docs-url` must be an http, https or file address such as "
               f"\"https://example.org/rules/{{code}}.md\", or \"packaged\"; got '{COMMAND}'")
    assert messages == [refused]
    done = lsp_check(tmp_path, {"ASCEND_LSP_DOCS_URL": ""})
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {refused}\n")


def test_a_command_uri_in_the_editor_settings_is_refused(tmp_path) -> None:
    hrefs, messages = diagnosed(tmp_path, options={"docs-url": COMMAND})
    assert hrefs == [DOCS_URL.format(code="NPU103")]
    assert messages == ["`docs-url` must be an http, https or file address such as "
                        f"\"https://example.org/rules/{{code}}.md\", or \"packaged\"; got '{COMMAND}'"]


ENV_REFUSED = ("$ASCEND_LSP_DOCS_URL must be an http, https or file address such as "
               f"\"https://example.org/rules/{{code}}.md\", or \"packaged\"; got '{COMMAND}'")


def test_a_command_uri_in_the_environment_is_refused(tmp_path) -> None:
    hrefs, messages = diagnosed(tmp_path, env={"ASCEND_LSP_DOCS_URL": COMMAND})
    assert hrefs == [DOCS_URL.format(code="NPU103")]
    assert messages == [ENV_REFUSED]
    done = lsp_check(tmp_path, {"ASCEND_LSP_DOCS_URL": COMMAND})
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {ENV_REFUSED}\n")
    listed = subprocess.run([sys.executable, "-c", "import sys; from ascend_lsp.cli.main import main; sys.exit(main())",
                             "rules", "--json"], env={**os.environ, "ASCEND_LSP_DOCS_URL": COMMAND},
                            capture_output=True, text=True, timeout=60)
    assert (listed.returncode, listed.stdout, listed.stderr) == (2, "", f"error: {ENV_REFUSED}\n")


async def test_diagnostics_link_the_configured_address(client, tmp_path):
    await start(client, client.name, tmp_path, options={"docs-url": "https://mirror.example/rules/{code}.html"})
    uri = open_document(client, tmp_path / "a.py", CUDA)
    found = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU103"]
    assert [d.code_description.href for d in found] == ["https://mirror.example/rules/NPU103.html"]


async def test_packaged_pages_and_the_hover_on_a_code(client, tmp_path):
    await start(client, client.name, tmp_path, options={"docs-url": "packaged"})
    uri = open_document(client, tmp_path / "b.py", CUDA)
    found = [d for d in await diagnostics(client, uri, 1) if d.code == "NPU103"]
    href = found[0].code_description.href
    assert href.startswith("file://") and Path(unquote(urlparse(href).path)).name == "NPU103.md"
    # the code in the noqa comment: the whole page, no network needed
    column = CUDA.splitlines()[2].index("NPU102") + 2
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(2, column))), TIMEOUT)
    text = hover.contents.value
    assert text.startswith("# NPU102: ") and "## What it does" in text and "## Where it lives" in text
    assert hover.range.start.character == column - 2

from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from .helpers import CLIENTS, server_config, start


@pytest_lsp.fixture(params=CLIENTS, config=server_config(), scope="module")
async def client(lsp_client: LanguageClient, request, tmp_path_factory):
    """One server per recorded client for a whole test module; tests use their own files."""
    await start(lsp_client, request.param, tmp_path_factory.mktemp("workspace"))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def workspace(client) -> Path:
    return client.root

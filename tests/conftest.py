import sys
from pathlib import Path

import pytest

# The builders' modules (mappings/build/: the data root, the resolver of installed names)
# import each other as top-level modules, as `python mappings/build` runs them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mappings" / "build"))


def pytest_addoption(parser):
    parser.addoption("--update-fixtures", action="store_true",
                     help="rewrite tests/rules/fixtures/*.expected and *.fixed.py from the current output")


@pytest.fixture
def update_fixtures(request) -> bool:
    return request.config.getoption("--update-fixtures")

import pytest


def pytest_addoption(parser):
    parser.addoption("--update-fixtures", action="store_true",
                     help="rewrite tests/rules/fixtures/*.expected and *.fixed.py from the current output")


@pytest.fixture
def update_fixtures(request) -> bool:
    return request.config.getoption("--update-fixtures")

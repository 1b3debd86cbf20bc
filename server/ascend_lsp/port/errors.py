"""Why a port cannot be made: the exceptions `port_source` raises and the reasons shared
by the parent and the port's child process."""

INSTALL_HINT = "porting needs libcst: pip install 'ascend-lsp[port]' (or pip install libcst)"
TOO_DEEP = "too deeply nested to port"


class PortUnavailable(Exception):
    """libcst is not installed."""


class PortError(Exception):
    """Why a file's port could not be made (the file does not parse, is too deeply nested,
    the port process crashed or ran out of time or memory): the reason, without the file's name."""

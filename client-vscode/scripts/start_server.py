"""Starts the server vendored in the extension: `python <extension>/bundled/start_server.py`.

The vendored libraries (bundled/libs: ascend_lsp and its pure-Python dependencies) go first
on this process's sys.path, so an older pygls in the user's environment cannot shadow them.
They are not put on PYTHONPATH: the processes the server starts, above all the Run-on-NPU
worker that runs the user's code, see the user's environment only.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "libs"))

from ascend_lsp.lsp.server import main  # noqa: E402  (after the path is set)

sys.exit(main())

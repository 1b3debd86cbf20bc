"""The "Run on NPU" worker: runs a snippet on a CPU reference and on a target, compares.

Self-contained on purpose: only the standard library at import time, torch / numpy /
mindspore imported lazily, and nothing from ascend_lsp. Its modules are one script when
shipped: `runner/bundle.py` joins them, and the client sends that script as source to any
interpreter (`python -c BOOTSTRAP`, the source then arrives as the first stdin line);
`python -m ascend_lsp.runner.worker` runs the same script from an installed package.

Protocol (newline-delimited JSON, one warm worker serves many jobs):
  worker → {"type": "hello", "protocol": 1, "pid": ..., "python": ...}   once, at start
  client → {"protocol": 1, "id": ..., "kind": "run", "file": {...}, "entry": {...},
            "target": "cpu|cuda|npu|emulate|mindspore", "options": {...}, "metrics": {...}}
  worker → {"type": "progress", "id": ..., "message": ...}                  zero or more
  worker → {"type": "result", "id": ..., "status": "ok|failed", ...}        exactly one
The protocol stream is a private copy of fd 1; fd 1 itself is pointed at stderr so that
prints from the snippet (Python or C level) cannot corrupt it.

Grading is not done here: the worker measures, the client grades with the msprobe table.
"""

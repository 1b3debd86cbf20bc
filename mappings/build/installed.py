"""The one resolver of dotted names in an installed package, for the builders and the tests.

`resolve("torch.cuda.amp.GradScaler")` is what the name gives in Python code that imported
the package: from the top-level module, each part is an attribute, or else a submodule to
import (`torch.distributed.rpc`). It returns MISSING when the name does not exist or cannot
be loaded here (a lazy attribute that raises, a submodule whose import fails); deprecation
warnings raised on access are silenced.
"""

from __future__ import annotations

import importlib
import warnings

MISSING = object()


def resolve(dotted: str) -> object:
    parts = dotted.split(".")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            obj = importlib.import_module(parts[0])
        except Exception:  # noqa: BLE001 - not installed, or cannot load here
            return MISSING
        for i in range(1, len(parts)):
            try:
                obj = getattr(obj, parts[i])
                continue
            except AttributeError:
                pass
            except Exception:  # noqa: BLE001 - lazy attributes may raise anything
                return MISSING
            try:
                obj = importlib.import_module(".".join(parts[: i + 1]))
            except Exception:  # noqa: BLE001 - no such submodule, or it fails to import
                return MISSING
    return obj


def exists(dotted: str) -> bool:
    return resolve(dotted) is not MISSING

"""Names a package loads on first use (PEP 562), with import failures that keep their cause.

Python turns an `AttributeError` raised inside a module's `__getattr__` into
"cannot import name X", which hides why the import failed (an incompatible dependency,
say). `load` re-raises such failures as `ImportError` naming the real cause.
"""

from __future__ import annotations

import importlib
from typing import Any


def load(package: str, name: str, module: str) -> Any:
    """Return `name` from `module` for `package`'s lazy `__getattr__`.

    Raises:
        ImportError: importing `module` failed; the message and `__cause__` carry why.
    """
    try:
        home = importlib.import_module(module)
    except ImportError:
        raise
    except Exception as exc:  # an AttributeError here would read as a missing name
        raise ImportError(
            f"cannot load {package}.{name}: importing {module} failed with "
            f"{type(exc).__name__}: {exc}",
            name=module,
        ) from exc
    return getattr(home, name)

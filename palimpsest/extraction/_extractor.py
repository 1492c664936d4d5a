"""``SpacyExtractor``: the default ``Extractor`` (spaCy ``en_core_web_sm``, no LLM).

>>> from datetime import datetime, UTC
>>> ex = SpacyExtractor()
>>> e = ex.extract("I moved to Sydney in June 2024.",
...                occurred_at=datetime(2024, 7, 2, 10, tzinfo=UTC))   # doctest: +SKIP
>>> [(f.predicate, f.object, f.valid_from.date().isoformat()) for f in e.facts]  # doctest: +SKIP
[('lives_in', 'Sydney', '2024-06-01')]
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from ._classify import classify
from ._document import read_document
from ._patterns import read_entities, read_facts
from ._precision import PrecisionGate, default_gate
from ._spacy import english_lexicon, load_pipeline, unload_pipeline
from ._trust import weigh
from ._types import Extraction, ExtractRequest, TextTooLargeError

__all__ = ["DEFAULT_MAX_CHARS", "SpacyExtractor", "normalise_text"]

DEFAULT_MAX_CHARS = 200_000
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SMART = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u201c": '"',
        "\u201d": '"',
        # Full-width sentence marks: the English model does not split on them.
        "\u3002": ". ",
        "\uff01": "! ",
        "\uff1f": "? ",
    }
)


def normalise_text(text: str) -> str:
    """NFC, straight quotes, ASCII sentence marks; control characters and lone surrogates -> spaces.

    >>> normalise_text("I\u2019m\\x00 here")
    "I'm  here"
    """
    text = unicodedata.normalize("NFC", _CONTROL_RE.sub(" ", text))
    return text.translate(_SMART)


def _paragraphs(text: str) -> list[str]:
    """A document's paragraphs (its lines); an unbroken wall of text is one."""
    return [p.strip() for p in re.split(r"\s*\n\s*", text) if p.strip()] or [text]


def _unique(entities: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for e in entities:
        seen.setdefault(e.name.casefold(), e)
    return list(seen.values())


def _aware_utc(dt: datetime) -> datetime:
    if not isinstance(dt, datetime):
        raise TypeError("occurred_at must be a datetime")
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError("occurred_at must be timezone-aware")
    return dt.astimezone(UTC)


class SpacyExtractor:
    """Rule-based extraction over spaCy parses; the pipeline loads on first use.

    >>> SpacyExtractor(max_chars=10).max_chars
    10

    ``max_chars`` bounds the input: longer text raises ``TextTooLargeError``
    (a ``ValueError``) instead of being parsed for minutes.  Results are a pure
    function of the arguments, so ``extract_many`` equals ``extract`` item by item.
    """

    def __init__(
        self,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        nlp: Any = None,
        gate: PrecisionGate | Literal["default"] | None = "default",
    ) -> None:
        self.max_chars = max_chars
        self._nlp = nlp
        self._shared = nlp is None  # the process-wide pipeline, not one given here
        self._gate = gate

    @property
    def gate(self) -> PrecisionGate | None:
        """The learned precision gate that rates each turn's facts (``_precision``);
        None: no rating, the engine's confidence floor alone decides."""
        if self._gate == "default":
            self._gate = default_gate()
        return self._gate

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            self._nlp = load_pipeline()
        return self._nlp

    def unload(self) -> None:
        """Let go of the shared pipeline (the next extraction loads it again); a
        pipeline given to the constructor is kept."""
        if self._shared:
            self._nlp = None
            unload_pipeline()

    def _check(self, text: str) -> str:
        if not isinstance(text, str):
            raise TypeError("text must be a str")
        if len(text) > self.max_chars:
            raise TextTooLargeError(
                f"text has {len(text)} characters; the extractor accepts at most {self.max_chars}"
            )
        return normalise_text(text)

    def extract(
        self,
        text: str,
        *,
        speaker: str = "user",
        addressee: str | None = None,
        occurred_at: datetime,
        reply_to: str | None = None,
    ) -> Extraction:
        """Read one text.

        >>> SpacyExtractor().extract("", occurred_at=datetime(2024, 1, 1, tzinfo=UTC)).facts
        ()
        """
        req = ExtractRequest(text, occurred_at, speaker, addressee, reply_to)
        return self.extract_many([req])[0]

    def extract_many(self, items: Sequence[ExtractRequest]) -> list[Extraction]:
        """Read many texts with one ``nlp.pipe`` pass; same results as one by one.

        >>> SpacyExtractor().extract_many([])
        []
        """
        cleaned = [self._check(it.text) for it in items]
        refs = [_aware_utc(it.occurred_at) for it in items]
        results: list[Extraction | None] = [None] * len(items)
        todo = [i for i, text in enumerate(cleaned) if text.strip()]
        for i, text in enumerate(cleaned):
            if not text.strip():
                results[i] = self._finish(items[i], text, [], ())
        if todo:
            lexicon = english_lexicon(self.nlp)
            # a document is parsed paragraph by paragraph, so a long one is read in turn
            pieces = {i: _paragraphs(cleaned[i]) for i in todo if items[i].kind == "document"}
            texts = [p for i in todo for p in pieces.get(i, [cleaned[i]])]
            docs = iter(self.nlp.pipe(texts))
            for i in todo:
                item = items[i]
                parsed = [next(docs) for _ in pieces.get(i, [cleaned[i]])]
                if i in pieces:
                    facts = read_document(
                        parsed, speaker=item.speaker, reference=refs[i], lexicon=lexicon
                    )
                else:
                    facts = read_facts(
                        parsed[0],
                        speaker=item.speaker,
                        addressee=item.addressee,
                        reference=refs[i],
                        lexicon=lexicon,
                        context=item.context,
                    )
                facts = weigh(
                    parsed,
                    facts,
                    speaker=item.speaker,
                    addressee=item.addressee,
                    gate=self.gate,
                    document=i in pieces,
                    reference=refs[i],
                )
                entities: list[Any] = []
                for doc in parsed:
                    entities += read_entities(
                        doc, facts, speaker=item.speaker, addressee=item.addressee
                    )
                results[i] = self._finish(item, cleaned[i], _unique(entities), tuple(facts))
        return [r for r in results if r is not None]

    @staticmethod
    def _finish(
        item: ExtractRequest, text: str, entities: Any, facts: tuple[Any, ...]
    ) -> Extraction:
        judgement = classify(text, facts=facts, reply_to=item.reply_to, speaker=item.speaker)
        return Extraction(
            entities=tuple(entities),
            facts=facts,
            importance=judgement.importance,
            kind=judgement.kind,
            is_instruction=judgement.is_instruction,
            decision=judgement.decision,
        )

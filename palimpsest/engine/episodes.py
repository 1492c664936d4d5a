"""Episodes: one memory as it arrived, stored idempotently, and the facts read from it.

    >>> ep = episodes.remember_many("default", [{"text": "I moved to Sydney in June 2024.",
    ...                                           "occurred_at": "2024-07-02T10:00:00Z"}])[0]

Extraction runs before the write (the extractor it is given, spaCy by default);
recall's search rows and vectors are prepared then too, by the episode index it
is given (`recall.index.RecallIndex`: `prepare` outside the lock, `written`
inside the transaction). The candidate facts go through the writer with the
episode's transaction time, quarantined by the trust rules below.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from .. import _names as names
from .._time import TimeLike, opt_utc
from ..errors import (
    NotFound,
    ValidationError,
)
from ..models import (
    AuthorKind,
    Episode,
    Fact,
)
from .context import Context
from .events import EmbedNotes
from .rows import AUTHOR_KINDS, TRUSTED, episode_model
from .writer import Writer

if TYPE_CHECKING:
    from ..extraction import Extraction, Extractor

# Extraction reads conversational turns up to this size; a longer turn is stored whole but
# not parsed. A document (author_kind="document") is read paragraph by paragraph up to
# DOCUMENT_MAX_CHARS (the extractor's own limit), so a long one is read, not skipped.
EXTRACT_MAX_CHARS = 20_000
DOCUMENT_MAX_CHARS = 200_000
# Below this pattern confidence an extracted fact waits in quarantine.
CONFIDENCE_FLOOR = 0.6
MAX_PARTICIPANTS = 100


def _participants(value: object) -> tuple[str, ...]:
    """The names of a conversation's participants, validated.

    >>> _participants(["Caroline", "Melanie"])
    ('Caroline', 'Melanie')
    """
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValidationError("participants: a list of names", field="participants")
    if len(value) > MAX_PARTICIPANTS:
        raise ValidationError(
            f"participants: at most {MAX_PARTICIPANTS} names", field="participants"
        )
    out = []
    for v in value:
        name = names.clean_name(v, field="participants")
        _check_unicode(name, "participants")
        out.append(name)
    return tuple(dict.fromkeys(out))


def _check_unicode(value: str, field: str) -> None:
    """Refuse lone surrogates (undecodable bytes smuggled in by ``surrogateescape``).

    >>> _check_unicode("I live in Oslo", "text")
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(
            f"{field}: not valid Unicode text (lone surrogate at {exc.start}; binary data?)",
            field=field,
        ) from None


class EpisodeIndex(Protocol):
    """What remembering needs of recall's index (`recall.index.RecallIndex`)."""

    def prepare(
        self, ns: str, fresh: Sequence[Mapping[str, Any]], extractions: Mapping[str, Extraction]
    ) -> Any:
        """Search rows and vectors of new episodes, computed outside the write lock."""

    def written(self, ns: str, pending: Any, rows: Sequence[Any]) -> None:
        """Inside the write transaction, after the episodes: their search rows."""

    def predecessor(self, ns: str, session: str, before: Any) -> Mapping[str, Any] | None:
        """The session's latest stored turn that occurred before `before` (or at all)."""


class Episodes:
    """`remember`: episodes stored idempotently, facts extracted and written with them."""

    def __init__(
        self,
        ctx: Context,
        writer: Writer,
        *,
        extractor: Extractor | None,
        index: EpisodeIndex,
        embed: EmbedNotes,
    ) -> None:
        self._ctx = ctx
        self._writer = writer
        self.extractor = extractor
        self._index = index
        self._embed = embed

    def remember(
        self,
        ns: str,
        text: str,
        speaker: str,
        author_kind: AuthorKind | None,
        occurred_at: TimeLike | None,
        session: str | None,
        source: str | None,
        reply_to: str | None,
        importance: float | None,
        addressee: str | None,
        participants: Sequence[str] | None = None,
    ) -> Episode:
        """Store one memory as it arrived, and the facts read from it.

        Idempotent on (text, speaker, occurred_at, session, source): the same
        episode remembered twice is one episode with one set of facts. Facts from
        non-user authors, from instruction-like text and weak readings are stored
        quarantined. `addressee` is who "you" is (for "you" in the text).
        `participants` names the people of a conversation: a participant who
        speaks speaks for themselves (author_kind "user" unless given, so their
        first-person facts are active), and with two participants "you" is the
        other one. A document (author_kind="document") is read as prose about
        one topic, paragraph by paragraph.

        >>> ep = mem.remember("I moved to Sydney in June 2024.", speaker="user",
        ...                   occurred_at="2024-07-02T10:00:00Z", session="s1")
        """
        item = {
            "text": text,
            "speaker": speaker,
            "author_kind": author_kind,
            "occurred_at": occurred_at,
            "session": session,
            "source": source,
            "reply_to": reply_to,
            "importance": importance,
            "addressee": addressee,
            "participants": participants,
        }
        return self.remember_many(ns, [item])[0]

    def remember_many(self, ns: str, items: Iterable[Mapping[str, Any]]) -> list[Episode]:
        """Many episodes in one transaction; same keywords and result as `remember`.

        Extraction runs before the transaction (spaCy `nlp.pipe` over the batch),
        so the write lock is held only for the writes.
        """
        ctx, store = self._ctx, self._ctx.store
        parsed = [parse_episode(ns, i, item) for i, item in enumerate(items)]
        known = store.names.episodes_by_id([p["id"] for p in parsed])
        fresh: dict[str, dict[str, Any]] = {}
        for p in parsed:
            if p["id"] not in known:
                fresh.setdefault(p["id"], p)
        extractions = self._extract(list(fresh.values()))
        search = self._index.prepare(ns, list(fresh.values()), extractions)
        with ctx.lock:
            saved = ctx.saved()
            try:
                with store.write(ns):
                    k = ctx.tick()
                    rows: list[dict[str, Any]] = []
                    claims: list[dict[str, Any]] = []
                    for p in fresh.values():
                        row = {**p, "occurred_at": p["occurred_at"] or k, "recorded_at": k}
                        row.pop("addressee", None)
                        ex = extractions.get(p["id"])
                        if ex is not None:
                            self._judge(row, ex, explicit_importance=p["_importance"])
                            claims += self._claims(ns, row, ex)
                        row.pop("_importance", None)
                        rows.append(row)
                    store.names.create_episodes(rows)
                    self._index.written(ns, search, rows)
                    facts = self._writer.write_assertions(ns, claims, k=k)
                    self._keep_doubts(ns, claims, facts, k)
            except BaseException:
                ctx.restore(saved)
                raise
            self._embed.flush()  # the new names and statements, after the commit
        by_episode: dict[str, list[Fact]] = {}
        for f in facts:
            by_episode.setdefault(f.evidence[0], []).append(f)
        stored = {r["id"]: r for r in rows}
        out = []
        for p in parsed:
            if p["id"] in stored:
                ep = episode_model(stored[p["id"]])
                out.append(ep.model_copy(update={"facts": by_episode.get(p["id"], [])}))
            else:
                out.append(self._stored_episode(ns, known[p["id"]]))
        return out

    def _stored_episode(self, ns: str, row: Mapping[str, Any]) -> Episode:
        """An episode remembered before, with the facts still resting on it."""
        facts = [
            self._writer.fact(a, status="retracted" if a["retracted_at"] else "current")
            for a in self._ctx.store.slots.assertions_citing(ns, row["id"])
        ]
        return episode_model(row).model_copy(update={"facts": facts})

    def _extract(self, episodes: list[dict[str, Any]]) -> dict[str, Extraction]:
        if self.extractor is None or not episodes:
            return {}
        from ..extraction import ExtractRequest

        # a turn past EXTRACT_MAX_CHARS is pasted text, stored but not read; a document is
        # read in sections up to DOCUMENT_MAX_CHARS
        todo = [
            p
            for p in episodes
            if len(p["text"])
            <= (DOCUMENT_MAX_CHARS if p["author_kind"] == "document" else EXTRACT_MAX_CHARS)
        ]
        context = self._previous_turns(episodes[0]["namespace"], todo) if todo else {}
        requests = [
            ExtractRequest(
                p["text"],
                occurred_at=p["occurred_at"] or self._ctx.now(),
                speaker=p["speaker"],
                addressee=p["addressee"],
                reply_to=p["reply_to"],
                kind="document" if p["author_kind"] == "document" else "turn",
                context=(context[p["id"]],) if p["id"] in context else (),  # (speaker, text)
            )
            for p in todo
        ]
        results = self.extractor.extract_many(requests)
        return {p["id"]: ex for p, ex in zip(todo, results, strict=True)}

    def _previous_turns(
        self, ns: str, episodes: list[dict[str, Any]]
    ) -> dict[str, tuple[str, str]]:
        """Each turn's predecessor in its session (the batch's own, else the stored one):
        the extractor reads it for "he" and "she" said of someone named a turn ago."""
        far = datetime.max.replace(tzinfo=UTC)
        by_session: dict[str, list[dict[str, Any]]] = {}
        for p in episodes:
            if p.get("session") is not None and p["author_kind"] != "document":
                by_session.setdefault(p["session"], []).append(p)
        out: dict[str, tuple[str, str]] = {}
        for s, group in by_session.items():
            group.sort(key=lambda p: p["occurred_at"] or far)
            before = self._index.predecessor(ns, s, group[0]["occurred_at"])
            turn = (before["speaker"], before["text"]) if before is not None else None
            for p in group:
                if turn is not None:
                    out[p["id"]] = turn
                turn = (p["speaker"], p["text"])
        return out

    @staticmethod
    def _judge(row: dict[str, Any], ex: Extraction, *, explicit_importance: bool) -> None:
        """Importance, kind and the decision record the extractor read from the text."""
        row["kind"] = ex.kind
        if not explicit_importance:
            row["importance"] = ex.importance
        if ex.decision:
            # a bare "yes" means nothing alone: keep it as the decision it was
            row["text"] = ex.decision

    def _claims(self, ns: str, row: Mapping[str, Any], ex: Extraction) -> list[dict[str, Any]]:
        """Candidate facts as parsed assertions, with the trust rules applied."""
        trusted = row["author_kind"] in TRUSTED
        out: list[dict[str, Any]] = []
        # within one turn, state the new before ending the old: "I no longer live in
        # Sydney, I moved to Perth" must not let the end cut Perth's open window short
        for c in sorted(ex.facts, key=lambda c: c.op == "end"):
            # a reading the precision gate rated is held when it doubts it; an unrated one
            # when its rule's confidence is below the floor
            weak = c.doubt is not None if c.gate is not None else c.confidence < CONFIDENCE_FLOOR
            item: dict[str, Any] = {
                "subject": c.subject,
                "predicate": c.predicate,
                "object": c.object,
                "confidence": c.gate if c.gate is not None else c.confidence,
                "author_kind": row["author_kind"],
                "evidence": [row["id"]],
                "occurred_at": row["occurred_at"],
                # instructions in non-user text, other authors and weak readings wait in
                # quarantine until consolidation finds independent support
                "quarantined": not trusted or weak or (ex.is_instruction and not trusted),
            }
            if c.op == "end":
                item.update(op="end", at=c.valid_from or row["occurred_at"])
            elif c.valid_from is not None or c.valid_to is not None:
                # an end date with no start ("until 2020") is a fact of unknown start
                item.update(valid_from=c.valid_from, valid_to=c.valid_to)
            try:
                parsed = self._writer.parse(ns, len(out), item)
            except ValidationError:
                continue  # a candidate the engine cannot store is not worth failing the turn
            parsed["origin"] = "instruction" if ex.is_instruction else "extraction"
            parsed["subject_type"], parsed["object_type"] = c.subject_type, c.object_type
            if c.doubt is not None:
                parsed["doubt"] = c.doubt
            out.append(parsed)
        return out

    def _keep_doubts(
        self, ns: str, claims: Sequence[Mapping[str, Any]], facts: Sequence[Fact], k: datetime
    ) -> None:
        """Why the precision gate held a fact, kept as the decision of step "gate" on its
        assertion (the review page shows it)."""
        rows = [
            {"id": f.id, "namespace": ns, "step": "gate", "reason": c["doubt"], "recorded_at": k}
            for c, f in zip(claims, facts, strict=True)
            if c.get("doubt") and f.quarantined
        ]
        if rows:
            self._ctx.store.consolidation.record_decisions(rows)

    def episode(self, ns: str, episode_id: str) -> Episode:
        row = self._ctx.store.names.episode(episode_id)
        if row is None or row["namespace"] != ns:
            raise NotFound(f"no episode {episode_id[:80]!r}", id=episode_id[:80])
        return episode_model(row)


def parse_episode(ns: str, index: int, item: Mapping[str, Any]) -> dict[str, Any]:
    """One item of `remember_many`, validated: the Episode row it would store (its id
    derived from what makes it the same episode)."""
    if not isinstance(item, Mapping):
        raise ValidationError(f"item {index}: expected a mapping", index=index)
    text = names.check_text(item.get("text"))
    if not text.strip():
        raise ValidationError("text: must not be empty", field="text", index=index)
    if "\x00" in text:
        raise ValidationError("text: contains NUL bytes (binary data?)", field="text")
    _check_unicode(text, "text")
    speaker = names.clean_name(item.get("speaker") or "user", field="speaker")
    _check_unicode(speaker, "speaker")
    people = _participants(item.get("participants"))
    # a named participant speaks for themselves: their own words are the user's kind
    author = item.get("author_kind") or (
        "user" if speaker == "user" or speaker in people else "third_party"
    )
    if author not in AUTHOR_KINDS:
        raise ValidationError(f"author_kind: one of {', '.join(AUTHOR_KINDS)}")
    occurred = opt_utc(item.get("occurred_at"), name="occurred_at")
    opt: dict[str, str | None] = {}
    for f in ("session", "source", "reply_to"):
        v = item.get(f)
        if v is not None:
            v = names.check_text(v, field=f, limit=names.MAX_NAME)
            _check_unicode(v, f)
        opt[f] = v
    importance = item.get("importance")
    if importance is not None and not (
        isinstance(importance, int | float) and 0.0 <= importance <= 1.0
    ):
        raise ValidationError("importance: a number in [0, 1]", field="importance")
    addressee = item.get("addressee")
    if addressee is not None:
        addressee = names.clean_name(addressee, field="addressee")
        _check_unicode(addressee, "addressee")
    elif speaker in people and len(people) == 2:
        addressee = next(p for p in people if p != speaker)  # "you" is the other one
    fingerprint = hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()
    ident = json.dumps(
        [
            ns,
            speaker,
            text,
            occurred.isoformat() if occurred else None,
            opt["session"],
            opt["source"],
        ]
    )
    return {
        "id": "ep_" + hashlib.sha256(ident.encode()).hexdigest()[:32],
        "namespace": ns,
        "text": text,
        "speaker": speaker,
        "author_kind": author,
        "occurred_at": occurred,
        "fingerprint": fingerprint,
        "importance": 0.55 if importance is None else float(importance),
        "_importance": importance is not None,
        "addressee": addressee,
        "kind": "fact",
        "quarantined": author not in TRUSTED,
        "archived": False,
        **opt,
    }

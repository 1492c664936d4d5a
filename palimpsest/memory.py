"""`Memory`, the one entry object: a thin facade over the collaborators that do the work.

    >>> with Memory.open("palimpsest-data") as mem:
    ...     mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    ...     [f.object for f in mem.facts("user", "lives_in")]
    ['Sydney']
    >>> Memory.open("postgresql://palimpsest@db:5432/mem").location   # a database instead
    'postgresql://palimpsest@db:5432/mem'

`Memory` opens the store, has each collaborator built with what it uses
(`_wiring.build`: the one place that shows who depends on whom), resolves the
namespace of each call and hands the call on. Each verb's docstring is its
owner's: `engine/` (writes, erase, reads, inspection, episodes, the
vocabulary), `recall/` (recall, the embedding worker, reindex),
`consolidation/` (the nightly run, its steps, a person's review), `transfer/`
(export, restore, importers). See docs/architecture.md.
Every write is one store transaction stamped with one transaction time K from
the clock, never earlier than the last one (`engine.context`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, TypeVar

from . import _names as names
from ._time import Clock, TimeLike, utcnow
from ._wiring import build, models
from .consolidation.night import this_process
from .consolidation.review import Reviewer
from .consolidation.runner import Consolidator
from .consolidation.steps.merge import Merge
from .consolidation.steps.unmerge import Unmerge
from .engine.episodes import Episodes
from .engine.eraser import Eraser
from .engine.idempotency import keyed
from .engine.inspector import DEFAULT_NODES, Inspector
from .engine.pages import PageReader
from .engine.reader import Reader
from .engine.rows import UNSET
from .engine.vocabulary import Vocabulary, default_predicates
from .engine.writer import IMPORT_BATCH, Writer
from .errors import MemoryLocked, ValidationError
from .models import (
    AuthorKind,
    Cardinality,
    Changes,
    ConsolidationChange,
    ConsolidationReport,
    Entity,
    EntityProfile,
    Episode,
    Explanation,
    Fact,
    GraphPage,
    Hit,
    Neighbourhood,
    Predicate,
    QuarantinedFact,
    Snapshot,
    Stats,
    Timeline,
    Tombstone,
)
from .recall.index import RecallIndex
from .recall.recaller import Recaller
from .recall.reindex import Progress, Reindexer
from .storage import Store
from .storage.backends import is_database_url, open_store
from .transfer import fact_batches
from .transfer.exporter import Exporter
from .transfer.importers import Importers
from .transfer.restorer import Restorer

if TYPE_CHECKING:
    from .extraction import Extractor
    from .recall import Embedder
    from .recall.embedder import EmbedderName

__all__ = ["DEFAULT_PATH", "UNSET", "Memory"]

DEFAULT_PATH = "palimpsest-data"
_F = TypeVar("_F", bound=Callable[..., Any])


def _doc(owner: Callable[..., Any]) -> Callable[[_F], _F]:
    """The verb carries its owner's docstring: the contract is kept where it is kept."""

    def take(verb: _F) -> _F:
        verb.__doc__ = owner.__doc__
        return verb

    return take


class Memory:
    """An agent's memory in one directory or one PostgreSQL database: episodes,
    entities, and bitemporal facts."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        namespace: str,
        extractor: Extractor | None,
        embedder: Embedder | None = None,
    ) -> None:
        self._store = store
        p = build(store, clock=clock, namespace=namespace, extractor=extractor, embedder=embedder)
        self._ctx, self._events, self._entities, self._vocab = p.ctx, p.events, p.entities, p.vocab
        self._uses, self._embed, self._writer, self._eraser = p.uses, p.embed, p.writer, p.eraser
        self._reader, self._inspector, self._episodes = p.reader, p.inspector, p.episodes
        self._index, self._recall, self._reindexer = p.index, p.recall, p.reindexer
        self._merge, self._unmerge, self._consolidation = p.merge, p.unmerge, p.consolidation
        self._review, self._pages = p.review, p.pages
        self._exporter, self._restorer, self._importers = p.exporter, p.restorer, p.importers
        self._keys, self._night = p.keys, p.night

    # --- lifecycle ---------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path = DEFAULT_PATH,
        *,
        clock: Clock | None = None,
        namespace: str = "default",
        extractor: Extractor | Literal["spacy"] | None = "spacy",
        embedder: Embedder | EmbedderName | None = "minilm",
        reembed: bool = False,
        vector_threshold: int | None = None,
    ) -> Memory:
        """Open (or create) the memory directory at `path`, or the memory in the
        PostgreSQL database a `postgresql://` URL names (its schema created when the
        database is empty; one of an older schema raises SchemaError naming
        `palimpsest migrate URL`; an unreachable server raises StoreUnavailable).

        `clock() -> aware datetime` is the transaction clock; the default is UTC
        now. `extractor` turns remembered text into facts: the spaCy one by
        default (its model loads on the first `remember`), any object with the
        `extraction.Extractor` shape, or None to store episodes without facts.
        `embedder` turns text into vectors for recall: all-MiniLM-L6-v2 by default
        (int8 on onnxruntime, loaded on first use), `"minilm-fp32"` (the fp32 model on
        torch, the `fp32` extra), any `recall.Embedder`, or None to recall by words
        only. A memory whose vectors came from another model raises
        EmbedderMismatch unless `reembed=True`, which recomputes them.
        A directory another process owns (`palimpsest.owner`) raises MemoryLocked naming
        `palimpsest.connect(path)`, which reaches it with these same verbs (a database
        is opened by any number of processes at once).
        `vector_threshold`: above this many episodes in a namespace, recall searches
        Kùzu's HNSW index instead of an exact in-memory matrix (default 200,000),
        once the nightly consolidation or `reindex` has built it (recall never does).
        """
        ns = names.check_namespace(namespace)
        extractor, embedder = models(extractor, embedder, vector_threshold)
        defaults = {p.name: p.cardinality for p in default_predicates()}
        try:
            store = open_store(path, defaults=defaults)
        except MemoryLocked as e:
            from .owner.files import held

            raise (None if is_database_url(path) else held(Path(path))) or e from None
        clock = clock or utcnow
        mem = cls(store, clock=clock, namespace=ns, extractor=extractor, embedder=embedder)
        if vector_threshold is not None:
            mem._index.vector_threshold = vector_threshold
        try:
            mem._index.open(reembed=reembed)
        except BaseException:
            store.close()
            raise
        return mem

    @property
    def location(self) -> str:
        """Where the memory is: its directory, or its database's URL without the password."""
        return self._store.location

    @property
    def path(self) -> Path:
        """The memory's directory; a memory in PostgreSQL has none (see `location`)."""
        where = self._store.location
        if is_database_url(where):
            raise ValidationError(f"{where} is a database: use Memory.location", field="path")
        return Path(where)

    @property
    def namespace(self) -> str:
        # the default namespace of every call (a plain attribute before the facade)
        return self._ctx.namespace

    @namespace.setter
    def namespace(self, value: str) -> None:
        self._ctx.namespace = value

    def close(self) -> None:
        """Close: write the recall uses still waiting and the vectors still being
        embedded, finish any pending erase compaction."""
        self._embed.stop()  # outside the lock: the embedding worker writes under it
        ctx = self._ctx
        with ctx.lock:
            if not ctx.closed:
                try:
                    self._uses.flush()
                finally:
                    ctx.closed = True
                    self._store.close()

    @contextmanager
    def using(self, namespace: str) -> Iterator[Memory]:
        """Calls from this thread default to `namespace` inside the block (an owner
        serving clients of different namespaces at once; see `palimpsest.owner`).

        >>> with mem.using("alice"):
        ...     mem.facts("user")          # alice's
        """
        with self._ctx.defaulting(namespace):
            yield self

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ns(self, namespace: str | None) -> str:
        """The namespace a call names (checked; ClosedError once closed), or the default."""
        return self._ctx.ns(namespace)

    def now(self, *, namespace: str | None = None) -> datetime:
        """The clock's reading, for defaults (`valid_at`, `known_at`); on a shared store
        never before the namespace's latest K, after one look at its changes."""
        return self._ctx.now(self._ns(namespace))

    # --- the vocabulary (engine/vocabulary.py) -------------------------------------------
    @_doc(Vocabulary.all)
    def predicates(self, *, namespace: str | None = None) -> list[Predicate]:
        return self._vocab.all(self._ns(namespace))

    @_doc(Vocabulary.get)
    def predicate(self, name: str, *, namespace: str | None = None) -> Predicate:
        return self._vocab.get(self._ns(namespace), name)

    @keyed("define_predicate", Predicate)
    @_doc(Vocabulary.define)
    def define_predicate(
        self, name: str, cardinality: Cardinality = "many", *, aliases: Iterable[str] = (),
        inverse: str | None = None, object_kind: Literal["entity", "value"] = "entity",
        namespace: str | None = None, idempotency_key: str | None = None
    ) -> Predicate:  # fmt: skip
        ns = self._ns(namespace)
        return self._vocab.define(
            ns, name, cardinality, aliases=aliases, inverse=inverse, object_kind=object_kind
        )

    # --- writes (engine/writer.py, engine/eraser.py) ---------------------------------------
    @keyed("assert_fact", Fact)
    @_doc(Writer.assert_fact)
    def assert_fact(
        self, subject: str, predicate: str, object: str, *, valid_from: TimeLike | None = UNSET,
        valid_to: TimeLike | None = None, confidence: float = 1.0,
        author_kind: AuthorKind = "user", evidence: Sequence[str] = (),
        quarantined: bool | None = None, occurred_at: TimeLike | None = None,
        namespace: str | None = None, idempotency_key: str | None = None
    ) -> Fact:  # fmt: skip
        ns = self._ns(namespace)
        return self._writer.assert_fact(
            ns, subject, predicate, object, valid_from, valid_to, confidence, author_kind,
            evidence, quarantined, occurred_at,
        )  # fmt: skip

    @keyed("assert_many", list[Fact])
    @_doc(Writer.assert_many)
    def assert_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str | None = None,
        idempotency_key: str | None = None
    ) -> list[Fact]:  # fmt: skip
        return self._writer.assert_many(self._ns(namespace), items)

    @keyed("end_fact", Fact)
    @_doc(Writer.end_fact)
    def end_fact(
        self, subject: str, predicate: str, object: str | None = None, *, at: TimeLike = UNSET,
        author_kind: AuthorKind = "user", evidence: Sequence[str] = (),
        occurred_at: TimeLike | None = None, namespace: str | None = None,
        idempotency_key: str | None = None
    ) -> Fact:  # fmt: skip
        ns = self._ns(namespace)
        return self._writer.end_fact(
            ns, subject, predicate, object, at, author_kind, evidence, occurred_at
        )

    @keyed("retract", Fact)
    @_doc(Writer.retract)
    def retract(
        self, fact_id: str, *, reason: str | None = None, namespace: str | None = None,
        idempotency_key: str | None = None
    ) -> Fact:  # fmt: skip
        return self._writer.retract(self._ns(namespace), fact_id, reason=reason)

    def import_facts(
        self, lines: Iterable[str], *, batch: int = IMPORT_BATCH, namespace: str | None = None
    ) -> int:
        """Assertions from JSON Lines (one `assert_many` item per line), in large batches.

        >>> mem.import_facts(open("facts.jsonl"))
        """
        return sum(
            len(self.assert_many(b, namespace=namespace)) for b in fact_batches(lines, batch)
        )

    @keyed("erase", list[Tombstone])
    @_doc(Eraser.erase)
    def erase(
        self, id: str, *, reason: str | None = None, namespace: str | None = None,
        idempotency_key: str | None = None
    ) -> list[Tombstone]:  # fmt: skip
        return self._eraser.erase(self._ns(namespace), id, reason=reason)

    # --- episodes (engine/episodes.py) -----------------------------------------------------
    @keyed("remember", Episode)
    @_doc(Episodes.remember)
    def remember(
        self, text: str, *, speaker: str = "user", author_kind: AuthorKind | None = None,
        occurred_at: TimeLike | None = None, session: str | None = None,
        source: str | None = None, reply_to: str | None = None, importance: float | None = None,
        addressee: str | None = None, participants: Sequence[str] | None = None,
        namespace: str | None = None, idempotency_key: str | None = None
    ) -> Episode:  # fmt: skip
        ns = self._ns(namespace)
        return self._episodes.remember(
            ns, text, speaker, author_kind, occurred_at, session, source, reply_to, importance,
            addressee, participants,
        )  # fmt: skip

    @keyed("remember_many", list[Episode])
    @_doc(Episodes.remember_many)
    def remember_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str | None = None,
        idempotency_key: str | None = None
    ) -> list[Episode]:  # fmt: skip
        return self._episodes.remember_many(self._ns(namespace), items)

    @_doc(Episodes.episode)
    def episode(self, episode_id: str, *, namespace: str | None = None) -> Episode:
        return self._episodes.episode(self._ns(namespace), episode_id)

    # --- reads (engine/reader.py) --------------------------------------------------------
    @_doc(Reader.facts)
    def facts(
        self, subject: str | None = None, predicate: str | None = None,
        object: str | None = None, *, valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None, include_quarantined: bool = False,
        limit: int | None = None, namespace: str | None = None,
    ) -> list[Fact]:  # fmt: skip
        return self._reader.facts(
            self._ns(namespace), subject, predicate, object, valid_at=valid_at,
            known_at=known_at, include_quarantined=include_quarantined, limit=limit,
        )  # fmt: skip

    @_doc(Reader.history)
    def history(
        self, subject: str, predicate: str | None = None, *, namespace: str | None = None
    ) -> list[Fact]:
        return self._reader.history(self._ns(namespace), subject, predicate)

    @_doc(Reader.entity)
    def entity(
        self,
        name: str,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> EntityProfile:
        ns = self._ns(namespace)
        return self._reader.entity(ns, name, valid_at=valid_at, known_at=known_at)

    @_doc(Reader.entities)
    def entities(self, *, namespace: str | None = None) -> list[Entity]:
        return self._reader.entities(self._ns(namespace))

    @_doc(Reader.snapshot)
    def snapshot(
        self,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        entities: Iterable[str] | None = None,
        namespace: str | None = None,
    ) -> Snapshot:
        ns = self._ns(namespace)
        return self._reader.snapshot(ns, valid_at=valid_at, known_at=known_at, entities=entities)

    @_doc(Reader.changes)
    def changes(
        self,
        since: TimeLike,
        until: TimeLike | None = None,
        *,
        known_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> Changes:
        return self._reader.changes(self._ns(namespace), since, until, known_at=known_at)

    @_doc(Reader.stats)
    def stats(self, *, namespace: str | None = None) -> Stats:
        return self._reader.stats(self._ns(namespace))

    @_doc(Reader.namespaces)
    def namespaces(self) -> list[str]:
        return self._reader.namespaces()

    # --- looking closely (engine/inspector.py) -------------------------------------------
    @_doc(Inspector.find_entities)
    def find_entities(
        self, text: str, *, limit: int = 20, namespace: str | None = None
    ) -> list[Entity]:
        return self._inspector.find_entities(self._ns(namespace), text, limit=limit)

    @_doc(Inspector.timeline)
    def timeline(
        self, subject: str, predicate: str | None = None, *, valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None, namespace: str | None = None,
    ) -> Timeline:  # fmt: skip
        ns, v, k = self._ns(namespace), valid_at, known_at
        return self._inspector.timeline(ns, subject, predicate, valid_at=v, known_at=k)

    @_doc(Inspector.explain)
    def explain(
        self, fact_id: str, *, version_id: str | None = None, namespace: str | None = None
    ) -> Explanation:
        return self._inspector.explain(self._ns(namespace), fact_id, version_id=version_id)

    @_doc(Inspector.neighbourhood)
    def neighbourhood(
        self, name: str, *, hops: int = 1, limit: int = DEFAULT_NODES,
        valid_at: TimeLike | None = None, known_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> Neighbourhood:  # fmt: skip
        return self._inspector.neighbourhood(
            self._ns(namespace), name, hops=hops, limit=limit, valid_at=valid_at, known_at=known_at
        )

    # --- the graph as entities and relations (engine/pages.py) -----------------------------
    @_doc(Reader.facts_of)
    def facts_of(
        self, entity_ids: Iterable[str], predicates: Iterable[str], *,
        valid_at: TimeLike | None = None, known_at: TimeLike | None = None,
        include_quarantined: bool = False, namespace: str | None = None,
    ) -> list[Fact]:  # fmt: skip
        return self._reader.facts_of(
            self._ns(namespace), entity_ids, predicates, valid_at=valid_at, known_at=known_at,
            include_quarantined=include_quarantined,
        )  # fmt: skip

    @_doc(PageReader.entity_ids)
    def entity_ids(
        self, names: Iterable[str], *, namespace: str | None = None
    ) -> dict[str, tuple[str, str]]:
        return self._pages.entity_ids(self._ns(namespace), names)

    @_doc(PageReader.page)
    def graph_page(
        self, search: str = "", *, type_predicate: str, note_predicate: str, offset: int = 0,
        limit: int = 10_000, relation_limit: int = 50_000, note_limit: int = 1_000,
        namespace: str | None = None,
    ) -> GraphPage:  # fmt: skip
        return self._pages.page(
            self._ns(namespace), search, type_predicate=type_predicate,
            note_predicate=note_predicate, offset=offset, limit=limit,
            relation_limit=relation_limit, note_limit=note_limit,
        )  # fmt: skip

    @_doc(PageReader.nodes)
    def graph_nodes(
        self, entity_ids: Iterable[str], *, type_predicate: str, note_predicate: str,
        namespace: str | None = None,
    ) -> GraphPage:  # fmt: skip
        return self._pages.nodes(
            self._ns(namespace), entity_ids, type_predicate=type_predicate,
            note_predicate=note_predicate,
        )  # fmt: skip

    # --- recall (recall/) ----------------------------------------------------------------
    @_doc(Recaller.recall)
    def recall(
        self, query: str, k: int = 5, *, valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None, min_score: float | None = None,
        diversity: float | None = None, namespace: str | None = None,
    ) -> list[Hit]:  # fmt: skip
        with self._store.reading():  # on a shared store: one look at its changes
            return self._recall.recall(
                self._ns(namespace), query, k, valid_at=valid_at, known_at=known_at,
                min_score=min_score, diversity=diversity,
            )  # fmt: skip

    @_doc(Reindexer.reindex)
    def reindex(
        self,
        *,
        re_embed: bool = False,
        batch_size: int = 256,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        return self._reindexer.reindex(re_embed=re_embed, batch_size=batch_size, progress=progress)

    @_doc(Recaller.warm)
    def warm_recall(self, namespace: str | None = None) -> None:
        self._recall.warm(self._ns(namespace))

    @_doc(RecallIndex.kind)
    def vector_index_kind(self, namespace: str | None = None) -> str:
        return self._index.kind(self._ns(namespace))

    # --- consolidation (consolidation/) --------------------------------------------------
    @_doc(Consolidator.consolidate)
    def consolidate(
        self, *, now: TimeLike | None = None, dry_run: bool = False, full: bool = False,
        namespace: str | None = None, progress: Callable[[str], None] | None = None,
        night: str | None = None, holder: str | None = None,
    ) -> ConsolidationReport:  # fmt: skip
        ns = self._ns(namespace)
        if night is not None:  # a fleet's scheduled run: once per namespace and night
            return self._night.run(ns, night, holder=holder or this_process())
        return self._consolidation.consolidate(
            ns, now=now, dry_run=dry_run, full=full, progress=progress
        )

    @_doc(Consolidator.reports)
    def consolidation_reports(self, *, namespace: str | None = None) -> list[ConsolidationReport]:
        return self._consolidation.reports(self._ns(namespace))

    @_doc(Merge.merges)
    def merges(self, *, namespace: str | None = None) -> list[dict[str, Any]]:
        return self._merge.merges(self._ns(namespace))

    @_doc(Unmerge.unmerge)
    def unmerge(self, merge_id: str, *, namespace: str | None = None) -> ConsolidationChange:
        return self._unmerge.unmerge(self._ns(namespace), merge_id)

    # --- review by a person (consolidation/review.py) ------------------------------------
    @_doc(Reviewer.quarantined)
    def quarantined(
        self, *, limit: int = 100, offset: int = 0, namespace: str | None = None
    ) -> list[QuarantinedFact]:
        return self._review.quarantined(self._ns(namespace), limit=limit, offset=offset)

    @keyed("promote", Fact)
    @_doc(Reviewer.promote)
    def promote(
        self, fact_id: str, *, reason: str, namespace: str | None = None,
        idempotency_key: str | None = None
    ) -> Fact:  # fmt: skip
        return self._review.promote(self._ns(namespace), fact_id, reason=reason)

    @keyed("reject", Fact)
    @_doc(Reviewer.reject)
    def reject(
        self, fact_id: str, *, reason: str, namespace: str | None = None,
        idempotency_key: str | None = None
    ) -> Fact:  # fmt: skip
        return self._review.reject(self._ns(namespace), fact_id, reason=reason)

    # --- transfer (transfer/) ------------------------------------------------------------
    @_doc(Exporter.export)
    def export(
        self, target: str | Path | IO[str], *, namespace: str | None = None
    ) -> dict[str, int]:
        return self._exporter.export(self._ns(namespace), target)

    @_doc(Exporter.export_lines)
    def export_lines(self, *, namespace: str | None = None) -> Iterator[str]:
        return self._exporter.export_lines(self._ns(namespace))

    @_doc(Restorer.restore)
    def restore(self, lines: Iterable[str], *, namespace: str | None = None) -> dict[str, int]:
        return self._restorer.restore(lines, namespace=namespace)

    @_doc(Importers.import_transcript)
    def import_transcript(
        self, lines: Iterable[str], *, namespace: str | None = None, batch: int = 500,
        progress: Progress | None = None,
    ) -> dict[str, int]:  # fmt: skip
        return self._importers.import_transcript(
            lines, namespace=namespace, batch=batch, progress=progress
        )

    @_doc(Importers.import_locomo)
    def import_locomo(
        self, text: str, *, conversations: Iterable[str] | None = None,
        namespace: str | None = None, batch: int = 500, progress: Progress | None = None,
    ) -> dict[str, int]:  # fmt: skip
        return self._importers.import_locomo(
            text, conversations=conversations, namespace=namespace, batch=batch, progress=progress
        )

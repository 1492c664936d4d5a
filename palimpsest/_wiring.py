"""Who is built with what: the collaborators behind one `Memory`, wired once.

    >>> parts = build(store, clock=utcnow, namespace="default", extractor=None, embedder=None)
    >>> parts.writer.assert_fact("default", "user", "likes", "jazz", ...)

`Memory.__init__` calls `build` and keeps what it delegates to; this module is
the one wiring diagram (docs/architecture.md draws it). Dependencies point one
way: each collaborator is handed what it uses, nothing reaches for a registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._time import Clock
from .consolidation.night import Night
from .consolidation.review import Reviewer
from .consolidation.runner import Consolidator, Step
from .consolidation.steps.decay import Decay
from .consolidation.steps.dedupe import Dedupe
from .consolidation.steps.expire import Expire
from .consolidation.steps.index import Index
from .consolidation.steps.merge import Merge
from .consolidation.steps.promote import Promote
from .consolidation.steps.reconcile import Reconcile
from .consolidation.steps.tools import Decisions, Tools
from .consolidation.steps.unmerge import Unmerge
from .engine.asof import AsOf
from .engine.context import Context
from .engine.entities import EntityIndex
from .engine.episodes import Episodes
from .engine.eraser import Eraser
from .engine.events import Events
from .engine.idempotency import Idempotency
from .engine.inspector import Inspector
from .engine.materialise import Materialiser
from .engine.pages import PageReader
from .engine.reader import Reader
from .engine.uses import UseLog
from .engine.vocabulary import Vocabulary
from .engine.writer import Writer
from .errors import ValidationError
from .recall._facts import FactRecall
from .recall.embed_worker import EmbedWorker
from .recall.index import RecallIndex
from .recall.recaller import Recaller
from .recall.reindex import Reindexer
from .storage import Store
from .transfer.exporter import Exporter
from .transfer.importers import Importers
from .transfer.restorer import Restorer

if TYPE_CHECKING:
    from .extraction import Extractor
    from .recall import Embedder


def models(
    extractor: Extractor | str | None, embedder: Embedder | str | None, vector_threshold: Any
) -> tuple[Extractor | None, Embedder | None]:
    """`Memory.open`'s model arguments checked and resolved: "spacy" is the spaCy
    extractor, a name an embedder (`recall.embedder.named`); both load on first use."""
    if vector_threshold is not None and (
        isinstance(vector_threshold, bool)
        or not isinstance(vector_threshold, int)
        or vector_threshold < 0
    ):
        raise ValidationError("vector_threshold: an integer >= 0", field="vector_threshold")
    if extractor == "spacy":
        from .extraction import SpacyExtractor

        extractor = SpacyExtractor()
    if isinstance(embedder, str):
        from .recall.embedder import named

        embedder = named(embedder)  # type: ignore[arg-type]
    return extractor, embedder  # type: ignore[return-value]


@dataclass(frozen=True)
class Parts:
    """The collaborators a `Memory` delegates to."""

    ctx: Context
    keys: Idempotency
    events: Events
    entities: EntityIndex
    vocab: Vocabulary
    uses: UseLog
    embed: EmbedWorker
    writer: Writer
    eraser: Eraser
    reader: Reader
    inspector: Inspector
    pages: PageReader
    index: RecallIndex
    recall: Recaller
    reindexer: Reindexer
    episodes: Episodes
    merge: Merge
    unmerge: Unmerge
    consolidation: Consolidator
    night: Night
    review: Reviewer
    exporter: Exporter
    restorer: Restorer
    importers: Importers


def build(
    store: Store,
    *,
    clock: Clock,
    namespace: str,
    extractor: Extractor | None,
    embedder: Embedder | None,
) -> Parts:
    """Every collaborator over one open store, and who drops which cache when."""
    ctx = Context.open(store, clock=clock, namespace=namespace)
    events = Events()
    # --- the bitemporal engine ----------------------------------------------------------
    entities = EntityIndex(store)
    mat = Materialiser(store, entities)
    vocab = Vocabulary(ctx, log=store.predicate_log, recast=mat.rematerialise)
    asof = AsOf(ctx)
    uses = UseLog(ctx)
    embed = EmbedWorker(ctx, embedder, name_of=entities.name_of)
    writer = Writer(ctx, vocab, entities, mat, embed=embed, events=events)
    reader = Reader(ctx, vocab, entities, asof)
    pages = PageReader(ctx, entities, vocab)
    # --- recall -------------------------------------------------------------------------
    index = RecallIndex(ctx, embedder)
    facts = FactRecall(ctx, entities, asof, embedder)
    episodes = Episodes(ctx, writer, extractor=extractor, index=index, embed=embed)
    # --- consolidation ------------------------------------------------------------------
    cs = store.consolidation
    tools = Tools(ctx, cs, writer, entities, Decisions(ctx, cs))  # the writing steps'
    merge = Merge(tools, vocab=vocab, embed=embed, embedder=embedder, events=events)
    promote = Promote(tools, vocab=vocab, materialiser=mat)
    steps: dict[str, Step] = {
        "dedupe": Dedupe(store, cs, embedder),
        "merge": merge,
        "reconcile": Reconcile(tools, vocab=vocab, materialiser=mat, events=events),
        "promote": promote,
        "expire": Expire(cs),
        "decay": Decay(store, cs, uses),
    }
    consolidator = Consolidator(
        ctx, cs, steps=steps, index=Index(ctx, index, embedder), uses=uses, embed=embed
    )
    parts = Parts(
        ctx=ctx,
        keys=Idempotency(ctx),
        events=events,
        entities=entities,
        vocab=vocab,
        uses=uses,
        embed=embed,
        writer=writer,
        eraser=Eraser(ctx, vocab, entities, mat, uses=uses, embed=embed, events=events),
        reader=reader,
        inspector=Inspector(ctx, vocab, entities, reader, writer, asof),
        pages=pages,
        index=index,
        recall=Recaller(ctx, index, facts, uses=uses, embedder=embedder),
        reindexer=Reindexer(ctx, index, embed, embedder),
        episodes=episodes,
        merge=merge,
        unmerge=Unmerge(tools, events=events),
        consolidation=consolidator,
        night=Night(ctx, store.leases, consolidator),
        review=Reviewer(tools, promote=promote, embed=embed),
        # --- transfer -------------------------------------------------------------------
        exporter=Exporter(ctx, uses=uses),
        restorer=Restorer(ctx, vocab, entities, mat, index=index, embed=embed, events=events),
        importers=Importers(ctx, episodes),
    )
    # --- who drops which cache when (engine/events.py) ----------------------------------
    events.on_names_changed(entities.forget)
    events.on_names_changed(pages.forget)
    events.on_erased(facts.forget_statements)
    events.on_erased(index.forget_episodes)
    events.on_restored(index.drop)
    events.on_consolidated(asof.forget)
    return parts

"""Every statement the PostgreSQL store sends is scoped to one namespace (issue 28, "ready
to distribute"), and the namespace leads every primary key.

    >>> seen = Seen(); mem._store.db.observer = seen      # every statement text sent
    >>> _workload(mem, clock, "default"); _workload(mem, clock, "work")
    >>> assert not unscoped(seen)                          # each names its namespace

So Citus could distribute every table by `namespace` and run each statement on one shard.
A statement is scoped when every data table it reads or writes is pinned to a namespace:
`namespace = %s` (or `= ANY(...)`, `IN (...)`, `= k.ns` of a key list the store binds), a
join on `namespace` to a table that is, or an INSERT whose column list names it. The few
statements that are database-wide on purpose, or that a seam method asks by id alone, are
listed in `ALLOWLIST`, each with why; any other unscoped statement fails the test.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.recall import HashingEmbedder

from .conftest import Clock

pytestmark = pytest.mark.models  # one Memory reads `remember` with the real spaCy extractor

NAMESPACES = ("default", "work")

# --- what may be unscoped, and why ---------------------------------------------------------
# Tables without a namespace column, database-wide by design (Citus reference tables, or one
# row the coordinator keeps): any statement that touches only these is fine.
GLOBAL_TABLES = {
    "schema_version": "the schema's migrations: one history for the database",
    "meta": "the embedder identity, vector generation numbers and the per-namespace"
    " consolidation watermarks (the namespace is inside the key): a small reference table",
    "store_clock": "the change and fact sequences a write of the whole database (no one"
    " namespace: consolidation, restore, re-embedding) moves, and every look reads: one row"
    " for the database (a reference table); a write of one namespace moves that namespace's"
    " row of namespace_clock instead",
}
# Statements that name no table at all, each allowed by name.
NO_TABLE = {
    "BEGIN": "a write transaction's start",
    "COMMIT": "its end",
    "ROLLBACK": "its end",
    "SELECT pg_advisory_xact_lock(%s)": "the database's write lock, alone: a write of no"
    " one namespace (re-embedding, migrations, the embedding worker's batches) waits for"
    " every writer",
    "SELECT pg_advisory_xact_lock_shared(%s),"
    " pg_advisory_xact_lock(%s::int4, hashtext(%s))": "a namespace's write lock (the"
    " namespace a bound parameter), with the database's, shared",
    "SELECT pg_advisory_xact_lock(%s::int4, hashtext(%s))": "a second namespace's lock in one"
    " transaction",
}
NO_TABLE_PATTERNS = {
    r"^SELECT collname FROM pg_collation ": "the catalogue: which collation folds text",
    r"^SELECT t FROM unnest\(%s::text\[\]\) AS t WHERE to_regclass\(t\)": "the catalogue:"
    " which auxiliary tables exist (export)",
}

SEAM = "unscoped: seam passes id only"
GLOBAL = "database-wide by design"


@dataclass(frozen=True)
class Allowed:
    pattern: str  # a regex searched in the statement, whitespace collapsed
    heading: str  # GLOBAL or SEAM
    why: str  # GLOBAL: why it spans namespaces; SEAM: the seam method(s) asking by id


ALLOWLIST: tuple[Allowed, ...] = (
    # ---- database-wide by design ----
    Allowed(
        r"^SELECT \(SELECT max\(recorded_at\) FROM assertion\) AS a,",
        GLOBAL,
        "Store.clocks: the latest transaction time and sequence of any namespace: where a"
        " process opening the memory starts its clock, and a write of the whole database's"
        " (read once per write, under the write lock)",
    ),
    Allowed(
        r"^SELECT NULL::text AS namespace, change_seq, fact_seq FROM store_clock WHERE id = 1"
        r" UNION ALL SELECT namespace, change_seq, fact_seq FROM namespace_clock$",
        GLOBAL,
        "Database.look inside a write of the whole database (consolidation, restore,"
        " re-embedding): every namespace's change sequences, so its copies are current",
    ),
    Allowed(
        r"^SELECT max\(changed_at\) FROM predicate_change$",
        GLOBAL,
        "PredicateLog.latest: the latest predicate change of any namespace (a clock)",
    ),
    Allowed(
        r"^WITH RECURSIVE s\(ns\) AS \(SELECT min\(namespace\) FROM slot",
        GLOBAL,
        "FactStore.namespaces: which namespaces exist (a loose index scan)",
    ),
    Allowed(
        r"^\(WITH RECURSIVE t AS \(SELECT min\(namespace\) AS ns FROM episode",
        GLOBAL,
        "TransferStore.namespaces: which namespaces exist (a loose index scan)",
    ),
    Allowed(
        r"^SELECT DISTINCT namespace FROM (episode|entity)$",
        GLOBAL,
        "RecallStore.namespaces_with_episodes, EmbeddingStore.namespaces_with_entities:"
        " which namespaces exist (the embedding backfill visits each)",
    ),
    Allowed(
        r"^SELECT DISTINCT id FROM \w+ WHERE id = ANY\(%s\)$",
        GLOBAL,
        "TransferStore.existing_ids: an import refuses ids used in any namespace (ids are"
        " primary keys on their own in the Kùzu store, and an export must restore on both)",
    ),
    Allowed(
        r"^(SELECT count\(\*\) FROM (episode_emb|entity_name_emb|statement_emb)"
        r"|DELETE FROM (episode_emb|entity_name_emb|statement_emb))$",
        GLOBAL,
        "reembed (RecallStore.delete_all_embeddings, EmbeddingStore.delete_all_derived):"
        " a new model replaces every vector of every namespace",
    ),
    # ---- unscoped: seam passes id only ----
    Allowed(
        r"^SELECT [\w, ]+ FROM entity WHERE id = (%s|ANY\(%s\))$",
        SEAM,
        "Names.entity(entity_id), Names.entities_by_ids(ids)",
    ),
    Allowed(
        r"^SELECT [\w, ]+ FROM episode WHERE id = (%s|ANY\(%s\))$",
        SEAM,
        "Names.episode(episode_id), Names.episodes_by_id(ids), Recall.episode_rows(ids)",
    ),
    Allowed(r"^DELETE FROM episode WHERE id = %s$", SEAM, "Names.delete_episode(episode_id)"),
    Allowed(
        r"^SELECT [\w, ]+ FROM assertion WHERE id = (%s LIMIT 1|ANY\(%s\))$",
        SEAM,
        "Slots.assertion(assertion_id), Slots.assertions_by_id(ids)",
    ),
    Allowed(
        r"^UPDATE assertion SET retracted_at = %s, retract_reason = %s WHERE id = %s$",
        SEAM,
        "Slots.retract_assertion(assertion_id, at, reason)",
    ),
    Allowed(
        r"^UPDATE assertion SET evidence = %s WHERE id = %s$",
        SEAM,
        "Slots.set_assertion_evidence(assertion_id, evidence)",
    ),
    Allowed(r"^DELETE FROM assertion WHERE id = %s$", SEAM, "Slots.delete_assertion(assertion_id)"),
    Allowed(
        r"^UPDATE fact SET expired_at = %s WHERE id = ANY\(%s\)$",
        SEAM,
        "Slots.expire_versions(version_ids, at)",
    ),
    Allowed(
        r"^WITH f AS \(DELETE FROM fact WHERE id = ANY\(%\(ids\)s\)\),",
        SEAM,
        "Slots.delete_versions(version_ids)",
    ),
    Allowed(
        r"FROM entity e JOIN fact f ON f.namespace = e.namespace AND f.\w+ = e.id"
        r" WHERE e.id = %s",
        SEAM,
        "Facts.entity_slots(entity_id, incoming=, limit=)",
    ),
    Allowed(
        r"^SELECT [\w, ]+ FROM tombstone WHERE id = %s ORDER BY namespace LIMIT 1$",
        SEAM,
        "Facts.tombstone(tomb_id)",
    ),
    Allowed(
        r"^SELECT id, text FROM episode_text WHERE id = ANY\(%s\)$",
        SEAM,
        "Recall.texts_of(ids)",
    ),
    Allowed(
        r"^SELECT id FROM episode_text WHERE prev = %s$", SEAM, "Recall.texts_citing(episode_id)"
    ),
    Allowed(
        r"^SELECT id FROM episode_emb( WHERE id = ANY\(%s\))?$",
        SEAM,
        "Recall.stored_embeddings(ids) (a large batch scans every id)",
    ),
    Allowed(
        r"^DELETE FROM (episode_text|episode_emb) WHERE id = ANY\(%s\)$",
        SEAM,
        "Recall.delete_for(episode_ids), Recall.delete_embeddings(episode_ids)",
    ),
    Allowed(
        r"^SELECT id, emb, ctx FROM episode_emb WHERE id = ANY\(%s\)$",
        SEAM,
        "Vectors.embeddings_of(ids)",
    ),
    Allowed(
        r"^SELECT id FROM (entity_name_emb|statement_emb) WHERE id = ANY\(%s\)$",
        SEAM,
        "Embeddings.name_ids(ids), Embeddings.statement_ids(ids)",
    ),
    Allowed(
        r"^SELECT id, emb, nosubj FROM statement_emb WHERE id = ANY\(%s\)$",
        SEAM,
        "Embeddings.statement_vectors(ids)",
    ),
    Allowed(
        r"^DELETE FROM (entity_name_emb|statement_emb) WHERE id = ANY\(%s\)$",
        SEAM,
        "Embeddings.delete_names(ids), Embeddings.delete_statements(ids)",
    ),
    Allowed(r"^DELETE FROM episode_use WHERE id = ANY\(%s\)$", SEAM, "Uses.delete(episode_ids)"),
    Allowed(
        r"^UPDATE episode SET archived = true WHERE id = ANY\(%s\)$",
        SEAM,
        "Consolidation.archive(episode_ids) (also record_duplicates' archiving)",
    ),
    Allowed(
        r"^SELECT namespace, key FROM entity_key WHERE entity_id = %s$",
        SEAM,
        "Consolidation.keys_of(entity_id)",
    ),
    Allowed(
        r"^UPDATE entity SET aliases = %s WHERE id = %s$",
        SEAM,
        "Consolidation.set_aliases(entity_id, aliases)",
    ),
    Allowed(
        r"^SELECT [\w, ]+ FROM entity_merge WHERE id = %s$", SEAM, "Consolidation.merge(merge_id)"
    ),
    Allowed(
        r"^UPDATE entity_merge SET unmerged_at = %s WHERE id = %s$",
        SEAM,
        "Consolidation.set_unmerged(merge_id, at)",
    ),
    Allowed(
        r"^UPDATE contest SET resolved_at = %s WHERE id = %s$",
        SEAM,
        "Consolidation.resolve_contest(contest_id, at) (reconcile's ids start with the slot"
        " id, so the namespace, but the seam does not promise that of a contest id)",
    ),
    Allowed(
        r"^SELECT step, reason FROM decision WHERE id = %s$",
        SEAM,
        "Consolidation.decision(assertion_id)",
    ),
)

# --- the check ---------------------------------------------------------------------------
_OCCURS = re.compile(r"\b(FROM|JOIN|INTO|UPDATE|USING)\s+(\w+)(?:\s+(?:AS\s+)?(\w+))?", re.I)
_KEYWORDS = {
    "where", "on", "join", "left", "right", "inner", "cross", "order", "group", "set", "using",
    "values", "select", "limit", "union", "with", "returning", "natural", "full", "as",
    "having", "offset", "window", "for", "lateral",
}  # fmt: skip
_BLOCK_START = re.compile(r"^\s*\(?\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b", re.I)
_CONST = r"(?:%s|%\(\w+\)s|ANY\s*\(|\w+\.ns\b)"  # a bound value, or a bound key list's column


def _norm(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def _blocks(sql: str) -> list[str]:
    """The statement's SELECT (INSERT, ...) blocks, each with its nested blocks cut out:
    the text a table's scope is read from. The first is the statement's top level."""
    out: list[str] = []

    def walk(start: int) -> tuple[str, int]:
        """The text from `start` to its closing parenthesis, nested blocks cut out."""
        own: list[str] = []
        i = start
        while i < len(sql):
            c = sql[i]
            if c == "(":
                inner, end = walk(i + 1)
                if _BLOCK_START.match(inner):
                    out.append(inner)
                    own.append("(…)")
                else:
                    own.append("(" + inner + ")")
                i = end + 1
                continue
            if c == ")":
                return "".join(own), i
            own.append(c)
            i += 1
        return "".join(own), i

    top, _ = walk(0)
    return [top, *out]


def _bound(text: str, name: str | None) -> bool:
    """Whether `text` pins `name.namespace` (or a bare `namespace`) to one value."""
    col = rf"(?<![\w.]){re.escape(name)}\.namespace" if name else r"(?<![\w.])namespace"
    return bool(
        re.search(rf"{col}\s*(?:=\s*{_CONST}|IN\s*\()", text, re.I)
        or re.search(rf"(?:%s|%\(\w+\)s|\b\w+\.ns)\s*=\s*{col}\b", text, re.I)
    )


def unscoped_tables(sql: str, data: set[str], known: set[str]) -> set[str]:
    """The tables a statement touches without pinning them to a namespace (a table with no
    namespace column outside `GLOBAL_TABLES` is never pinned)."""
    blocks = _blocks(_norm(sql))
    whole = " ".join(blocks)
    # (block, table, alias or None, how) of every table occurrence
    occurrences = []
    for text in blocks:
        for m in _OCCURS.finditer(text):
            table = m[2].lower()
            if table not in known:
                continue
            alias = m[3] if m[3] and m[3].lower() not in _KEYWORDS else None
            occurrences.append((text, table, alias, m))
    # aliases joined on namespace to one another (correlated subqueries included)
    joined = re.findall(r"(\w+)\.namespace\s*=\s*(\w+)\.namespace", whole)
    pinned: set[str] = set()
    loose = []
    for text, table, alias, m in occurrences:
        if table in GLOBAL_TABLES:
            continue
        if table not in data:
            loose.append(table)
            continue
        if m[1].upper() == "INTO":
            cols = re.match(r"\s*\(([^)]*)\)", text[m.end(2) :])
            ok = bool(cols and "namespace" in re.split(r"\s*,\s*", cols[1].strip()))
        else:
            ok = _bound(text, alias or table) or (alias is None and _bound(text, None))
        if ok:
            pinned.add(alias or table)
        else:
            loose.append((table, alias))
    # a join on namespace to a pinned alias pins it too
    changed = True
    while changed:
        changed = False
        for a, b in joined:
            for x, y in ((a, b), (b, a)):
                if y in pinned and x not in pinned:
                    pinned.add(x)
                    changed = True
    return {
        o if isinstance(o, str) else o[0]
        for o in loose
        if isinstance(o, str) or (o[1] or o[0]) not in pinned
    }


def allowed(sql: str) -> Allowed | None:
    s = _norm(sql)
    return next((a for a in ALLOWLIST if re.search(a.pattern, s)), None)


@dataclass
class Seen:
    """The observer: every statement text the store sent."""

    statements: list[str] = field(default_factory=list)

    def __call__(self, sql: str, params: Any) -> None:
        self.statements.append(sql)


def _tables(url: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """({table: columns}, {table: primary key columns in key order}) of the schema."""
    import psycopg

    with psycopg.connect(url) as conn:
        cols: dict[str, list[str]] = {}
        for t, c in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
        ):
            cols.setdefault(t, []).append(c)
        keys: dict[str, list[str]] = {}
        for t, c in conn.execute(
            "SELECT c.relname, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'"
            " CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, pos)"
            " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum"
            " WHERE i.indisprimary ORDER BY c.relname, k.pos"
        ):
            keys.setdefault(t, []).append(c)
    return cols, keys


# --- the workload --------------------------------------------------------------------------
def _workload(mem: Memory, clock: Clock, ns: str) -> None:
    """Every kind of write and read, in namespace `ns`."""
    t = clock.tick
    mem.define_predicate("lives_in", "one", namespace=ns)
    mem.define_predicate("likes", "many", aliases=["enjoys"], namespace=ns, idempotency_key="d1")
    mem.define_predicate("likes", "many", aliases=["enjoys"], namespace=ns, idempotency_key="d1")
    t()
    mem.assert_fact(
        "user", "lives_in", "Melbourne", valid_from="2022-03-01T00:00:00Z", namespace=ns
    )
    t()
    sydney = mem.assert_fact(
        "user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z", namespace=ns,
        idempotency_key="a1",
    )  # fmt: skip
    again = mem.assert_fact(
        "user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z", namespace=ns,
        idempotency_key="a1",
    )  # fmt: skip
    assert again.id == sydney.id
    t()
    mem.end_fact("user", "lives_in", "Sydney", at="2025-02-01T00:00:00Z", namespace=ns)
    t()
    mem.assert_fact("user", "lives_in", "Perth", valid_from="2025-02-01T00:00:00Z", namespace=ns)
    t()
    mem.retract(sydney.id, reason="a typo", namespace=ns)
    t()
    mem.assert_many(
        [
            {"subject": "user", "predicate": "likes", "object": "jazz", "valid_from": None},
            {"subject": "user", "predicate": "likes", "object": "tea"},
            {"subject": "Mira", "predicate": "job_title", "object": "paramedic"},
            {"subject": "my sister", "predicate": "lives_in", "object": "Auckland"},
            # written and overwritten at one K: the first version vanishes
            {"subject": "Ann", "predicate": "lives_in", "object": "Oslo", "valid_from": None},
            {"subject": "Ann", "predicate": "lives_in", "object": "Bergen", "valid_from": None},
        ],
        namespace=ns,
    )
    tea = mem.facts("user", "likes", namespace=ns)
    t()
    mem.retract(next(f.id for f in tea if f.object == "tea"), namespace=ns)
    mem.end_fact("user", "likes", "jazz", at="2026-01-01T00:00:00Z", namespace=ns)
    # contested: two level sources at one start (reconcile), and names that merge
    for obj in ("Initech", "Globex"):
        mem.assert_fact(
            "Bob", "works_at", obj, valid_from="2024-01-01T00:00:00Z", author_kind="tool",
            quarantined=False, namespace=ns,
        )  # fmt: skip
    mem.assert_fact("Café Rio", "located_in", "Lisbon", valid_from=None, namespace=ns)
    t()
    mem.assert_fact("the cafe-rio", "likes", "jazz", valid_from=None, namespace=ns)
    mem.assert_fact("user", "sibling", "Mira", valid_from=None, namespace=ns)
    mem.assert_fact(
        "Eve", "lives_in", "Rome", valid_from="2020-01-01T00:00:00Z",
        valid_to="2021-01-01T00:00:00Z", namespace=ns,
    )  # fmt: skip
    # episodes: the real extractor reads them; a tool's claim is quarantined
    t()
    mem.remember("I work at Acme as a data engineer.", session="s1", namespace=ns)
    t()
    mem.remember(
        "My sister Ana arrives on Friday.", session="s1", namespace=ns, idempotency_key="r1"
    )
    note = "Meeting notes: the launch moved to the fourteenth of March."
    mem.remember(note, speaker="Sam", session="a", occurred_at="2029-01-01T00:00:00Z", namespace=ns)
    mem.remember(
        note.upper(), speaker="Sam", session="b", occurred_at="2029-01-02T00:00:00Z", namespace=ns
    )
    low = mem.remember("The weather was grey all day.", importance=0.2, session="w", namespace=ns)
    ep = mem.remember(
        "Mira lives in Berlin.", speaker="search", author_kind="tool", session="s4", namespace=ns
    )
    claim = mem.assert_fact(
        "Mira", "lives_in", "Berlin", author_kind="tool", valid_from="2024-01-01T00:00:00Z",
        evidence=[ep.id], namespace=ns,
    )  # fmt: skip
    mem.remember_many(
        [{"text": "I like green tea.", "session": "s5"}, {"text": "Ok.", "session": "s5"}],
        namespace=ns,
    )
    mem._embed.drain()  # the name and statement vectors, written after each write
    # reads
    for read in _reads(mem, ns, claim.id, ep.id):
        read()
    # consolidation: merge, reconcile, expire, dedupe; later decay, a nightly run, an unmerge
    t()
    report = mem.consolidate(namespace=ns)
    mem.assert_fact("Bob", "works_at", "Globex", valid_from="2024-01-01T00:00:00Z", namespace=ns)
    t(days=1)
    mem.consolidate(namespace=ns, full=True)
    t(days=400)
    mem.consolidate(namespace=ns, night=f"2031-02-0{1 + NAMESPACES.index(ns)}", holder="h")
    merges = mem.merges(namespace=ns)
    assert merges, report
    t()
    mem.unmerge(merges[0]["id"], namespace=ns)
    q = mem.quarantined(namespace=ns)
    if q:
        mem.promote(q[0].fact.id, reason="checked", namespace=ns)
    mem.consolidation_reports(namespace=ns)
    assert mem.episode(low.id, namespace=ns)
    # erase: an assertion, then an episode (and what rests on it alone)
    t()
    mem.erase(claim.id, namespace=ns, idempotency_key="e1")
    t()
    mem.erase(ep.id, namespace=ns)
    mem._embed.drain()
    for read in _reads(mem, ns, claim.id, ep.id):
        read()


def _reads(mem: Memory, ns: str, fact_id: str, episode_id: str) -> Iterator[Any]:
    v, k = "2024-07-01T00:00:00Z", mem.now()
    yield lambda: mem.facts(namespace=ns)
    yield lambda: mem.facts("user", valid_at=v, known_at=k, limit=5, namespace=ns)
    yield lambda: mem.facts(None, None, "jazz", include_quarantined=True, namespace=ns)
    yield lambda: mem.history("user", namespace=ns)
    yield lambda: mem.history("Mira", "lives_in", namespace=ns)
    yield lambda: mem.snapshot(valid_at=v, namespace=ns)
    yield lambda: mem.snapshot(entities=["user"], namespace=ns)
    yield lambda: mem.entity("user", namespace=ns)
    yield lambda: mem.entity("jazz", valid_at=v, known_at=k, namespace=ns)
    yield lambda: mem.entities(namespace=ns)
    yield lambda: mem.find_entities("us", namespace=ns)
    yield lambda: mem.timeline("user", "lives_in", namespace=ns)
    yield lambda: mem.neighbourhood("user", hops=2, namespace=ns)
    yield lambda: mem.changes("2020-01-01T00:00:00Z", namespace=ns)
    yield lambda: mem.stats(namespace=ns)
    yield lambda: mem.namespaces()
    yield lambda: mem.predicates(namespace=ns)
    yield lambda: mem.predicate("likes", namespace=ns)
    yield lambda: mem.recall("where does the user live?", namespace=ns)
    yield lambda: mem.recall("jazz", valid_at=v, known_at=k, namespace=ns)
    yield lambda: mem.quarantined(namespace=ns)
    yield lambda: _gone_or(lambda: mem.episode(episode_id, namespace=ns))
    yield lambda: _gone_or(lambda: mem.explain(fact_id, namespace=ns))
    ids = mem.entity_ids(["user", "Mira", "jazz"], namespace=ns)
    yield lambda: mem.facts_of([i for i, _ in ids.values()], ["likes", "type"], namespace=ns)
    pages = {"type_predicate": "type", "note_predicate": "note", "namespace": ns}
    yield lambda: mem.graph_page(**pages)  # type: ignore[arg-type]
    yield lambda: mem.graph_page("us", **pages)  # type: ignore[arg-type]
    yield lambda: mem.graph_nodes([i for i, _ in ids.values()], **pages)  # type: ignore[arg-type]
    yield lambda: _pages(mem, ns, [i for i, _ in ids.values()])


def _pages(mem: Memory, ns: str, ids: list[str]) -> None:
    """The pages slice as a graph too large to hold in memory reads it (`engine/pages.py`
    keeps a small graph in a view, so a small workload never asks these)."""
    pg = mem._store.pages(ns, mem.now(), ["note", "type"])
    pg.entities(
        needle="",
        type_predicate="type",
        value_predicates=["age"],
        kinds=("thing", "value"),
        offset=0,
        limit=20,
    )
    pg.entities(
        needle="us",
        type_predicate="type",
        value_predicates=[],
        kinds=("thing", "value"),
        offset=0,
        limit=20,
    )
    pg.believed()
    pg.own(ids[0], "likes", 10)
    pg.ids(["user", "mira"])
    pg.mentioned(ids)
    pg.own_lists(ids, "likes", 10)
    pg.own_first(ids, "type")
    pg.own_counts(ids, "likes")
    pg.relations(ids, 10)


def _gone_or(read: Any) -> None:
    """A read of something the workload may have erased by then."""
    from palimpsest.errors import AlreadyErased, NotFound

    with contextlib.suppress(NotFound, AlreadyErased):
        read()


@pytest.fixture(scope="module")
def observed(postgres: Any) -> tuple[Seen, str]:
    """The workload in two namespaces, an export of each restored into a second database
    (read back and exported again), every statement recorded."""
    url = postgres.create_database("statements")
    copy_url = postgres.create_database("statements_copy")
    seen = Seen()
    clock = Clock(datetime(2030, 1, 1, tzinfo=UTC))
    embedder = HashingEmbedder()
    with Memory.open(url, clock=clock, embedder=embedder) as mem:
        mem._store.db.observer = seen  # type: ignore[attr-defined]
        for ns in NAMESPACES:
            _workload(mem, clock, ns)
        exports = {ns: list(mem.export_lines(namespace=ns)) for ns in NAMESPACES}
        mem.reindex()
        mem.reindex(re_embed=True)
    with Memory.open(copy_url, clock=clock, embedder=embedder, extractor=None) as copy:
        copy._store.db.observer = seen  # type: ignore[attr-defined]
        for ns in NAMESPACES:
            copy.restore(exports[ns], namespace=ns)
            copy.import_facts(
                ['{"subject": "Zed", "predicate": "likes", "object": "x"}'], namespace=ns
            )
            copy.facts(namespace=ns)
            list(copy.export_lines(namespace=ns))
            copy.recall("jazz", namespace=ns)
    return seen, url


def test_every_statement_is_scoped_to_one_namespace(observed: tuple[Seen, str]) -> None:
    seen, url = observed
    columns, _ = _tables(url)
    data = {t for t, cols in columns.items() if "namespace" in cols}
    known = set(columns)
    per_table: Counter[str] = Counter()
    bad: dict[str, set[str]] = {}
    used: Counter[Allowed] = Counter()
    for sql in seen.statements:
        s = _norm(sql)
        if re.match(r"^(CREATE|DO|ALTER|DROP)\b", s):
            continue  # the schema's own DDL (migrations)
        touched = {m[2].lower() for m in _OCCURS.finditer(s)} & known
        if not touched:
            ok = s in NO_TABLE or any(re.search(p, s) for p in NO_TABLE_PATTERNS)
            assert ok, f"a statement on no table, not allowed by name: {s}"
            continue
        per_table.update(touched)
        loose = unscoped_tables(s, data, known)
        if loose:
            a = allowed(s)
            if a is None:
                bad[s] = loose
            else:
                used[a] += 1
    assert not bad, "statements not scoped to one namespace:\n" + "\n".join(
        f"  {sorted(t)}: {s}" for s, t in bad.items()
    )
    # not vacuous: the workload reached every table with a namespace, most of them often
    missing = {t: per_table[t] for t in data if per_table[t] < 2}
    assert not missing, f"tables the workload barely touched: {missing}"
    assert len(seen.statements) > 2000
    assert sum(per_table[t] for t in data) > 2000


_CASES = (  # (statement, the tables it leaves unscoped)
    ("SELECT id FROM entity WHERE id = %s", {"entity"}),
    ("SELECT id FROM entity WHERE namespace = %s AND id = %s", set()),
    (
        "SELECT k.key FROM entity_key k JOIN entity e ON e.id = k.entity_id WHERE k.namespace = %s",
        {"entity"},
    ),
    (
        "SELECT k.key FROM entity_key k JOIN entity e ON e.namespace = k.namespace"
        " AND e.id = k.entity_id WHERE k.namespace = %s",
        set(),
    ),
    (
        "SELECT e.id FROM entity e WHERE e.namespace = %s AND NOT EXISTS (SELECT 1"
        " FROM fact f WHERE f.namespace = e.namespace AND f.subject_id = e.id)",
        set(),
    ),
    (
        "SELECT e.id FROM entity e WHERE e.namespace = %s AND NOT EXISTS (SELECT 1"
        " FROM fact f WHERE f.subject_id = e.id)",
        {"fact"},
    ),
    (
        "SELECT s.id FROM slot s JOIN unnest(%s::text[], %s::text[]) AS k(ns, id)"
        " ON s.namespace = k.ns AND s.id = k.id",
        set(),
    ),
    ("INSERT INTO fact (id, namespace) VALUES (%s, %s)", set()),
    ("INSERT INTO fact (id, slot_id) VALUES (%s, %s)", {"fact"}),
    ("INSERT INTO meta (key, value) VALUES (%s, %s)", set()),
    ("INSERT INTO version_order (id, n) SELECT r.id, 1 FROM r", {"version_order"}),
    (
        "DELETE FROM line_start s USING unnest(%s::text[], %s::text[]) AS d(ns, id)"
        " WHERE s.namespace = d.ns AND s.line_id = d.id",
        set(),
    ),
    (
        "SELECT (SELECT count(*) FROM episode WHERE namespace = %(ns)s) AS a,"
        " (SELECT count(*) FROM fact) AS b",
        {"fact"},
    ),
    (
        "SELECT x FROM episode WHERE slot_id IN (SELECT id FROM slot WHERE namespace = %s)",
        {"episode"},
    ),
)


@pytest.mark.parametrize(("sql", "loose"), _CASES)
def test_the_check_flags_what_is_unscoped(sql: str, loose: set[str]) -> None:
    """The classifier itself: what it must flag and what it must pass."""
    data = {"fact", "entity", "entity_key", "line_start", "episode", "slot"}
    assert unscoped_tables(sql, data, data | {"meta", "version_order"}) == loose


def test_namespace_leads_every_primary_key(pg_url: str) -> None:
    """Every table but the database-wide ones has `namespace` first in its primary key
    (so Citus can distribute it by namespace, and a namespace's rows are contiguous)."""
    from palimpsest.postgres import Store

    Store.open(pg_url).close()
    columns, keys = _tables(pg_url)
    assert len(columns) > 20, columns
    assert set(GLOBAL_TABLES) <= set(columns)
    wrong = {
        t: keys.get(t)
        for t in columns
        if t not in GLOBAL_TABLES and (keys.get(t) or [None])[0] != "namespace"
    }
    assert not wrong, f"primary keys that do not lead with namespace: {wrong}"

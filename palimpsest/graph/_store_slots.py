"""Slots, their journals and their lines: the write path's statements.

    >>> heads = store.slot_heads([slot_id])                       # the journal tails
    >>> windows = store.line_windows({line_id: reach})            # what a write reads
    >>> store.write_facts(FactWrite(at=k, assertions=[a], insert=[v], lines=[edit]),
    ...                   heads=heads)

A write names what it did in logical rows (`FactWrite`); this module lays them
out: each touched slot's journal gets the write's events appended to its tail
(graph/_journal.py), each edited line gets the pages its window covered rewritten
(graph/_lines.py), and the `Assertion`/`Fact` nodes are created or expired. A
small write is one fused statement (graph/_fused.py); larger ones are batched.
No temporal rule is decided here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .._time import epoch_us
from ..errors import StoreError
from ..storage.rows import (
    SEP,
    FactWrite,
    History,
    LineAsk,
    LineEdit,
    LineStart,
    LineWindow,
    SlotHead,
)
from ..temporal import window_of
from ._bulk import load_rows
from ._columns import (
    ASSERTION_COLUMNS,
    FACT_COLUMNS,
    assertion_row,
    fact_row,
    param_props,
)
from ._cypher import FEW, LOAD_MIN, SCAN_BATCH, SLOT_FACTS, Keys, chunks, cols, seek_chunks
from ._db import Database, Row
from ._fused import NODE_COLUMNS, Node, fits, fused_write
from ._journal import (
    PAGE_EVENTS,
    Event,
    append_text,
    fold,
    journal_events,
    pack_events,
    state_events,
    unpack_events,
    versions_at,
)
from ._lines import (
    INLINE,
    Layout,
    pack_run,
    page_id,
    rechunk,
    unpack_run,
)
from ._slots import to_us
from ._store_names import NameStore

PAGES_KEPT = 4096  # journal pages kept in process (~20 kB each): they never change
_LINE_READ = NODE_COLUMNS["Line"][1:]
_SLOT_READ = NODE_COLUMNS["Slot"][1:]
_ASSERTION_READ = tuple(c for c in ASSERTION_COLUMNS if c != "id")
# one node per MATCH, chained: each plans as one hash join
_CREATE_VERSIONS = (
    "MATCH (e:Entity {id: subject_id}) WITH * MATCH (o:Entity {id: object_id})"
    f" CREATE (f:Fact {{{cols(FACT_COLUMNS)}}}), (e)-[:SUBJ]->(f), (f)-[:OBJ]->(o)"
)


@dataclass
class _Tail:
    """A stored slot's journal tail, as `slot_heads` read it (`SlotHead.handle`)."""

    pages: int = 0
    tail_n: int = 0
    tail: str = "[]"


@dataclass
class _Paged:
    """Where a window's run lies (`LineWindow.handle`): the line's layout, the pages
    read (span i..j) and all their starts, the run being `loaded[cut[0]:cut[1]]`."""

    layout: Layout = field(default_factory=Layout)
    span: tuple[int, int] = (0, 0)
    loaded: list[LineStart] = field(default_factory=list)
    cut: tuple[int, int] = (0, 0)


class SlotStore:
    """Slots (journal tails and pages), lines (starts and pages), assertions, versions."""

    def __init__(self, db: Database, keys: Keys, names: NameStore) -> None:
        self.db = db
        self._keys = keys
        self._names = names  # the entities a write creates
        self._pages: dict[str, str] = {}  # journal page id -> its events, packed
        self._pages_at = db.rollbacks

    # --- reads -----------------------------------------------------------------------------
    def slot_heads(self, slot_ids: Sequence[str]) -> dict[str, SlotHead]:
        """The stored slots among `slot_ids`, with their journal tails."""
        rows = self._keys.read("Slot", slot_ids, _SLOT_READ)
        return {
            sid: SlotHead(
                {c: r[c] for c in ("id", "namespace", "subject_id", "predicate", "subject")},
                handle=_Tail(int(r["pages"] or 0), int(r["tail_n"] or 0), r["tail"] or "[]"),
            )
            for sid, r in rows.items()
        }

    def histories(self, slot_ids: Sequence[str]) -> dict[str, History]:
        """(slot row, its log in recording order, every version) of each stored slot: the
        journal's pages and tail folded back (`graph/_journal.py`)."""
        out = {}
        for sid, (row, events) in self._journals(slot_ids).items():
            log, versions = fold(events, slot=row)
            out[sid] = (row, log, versions)
        return out

    def versions_at(
        self, slot_id: str, *, valid_at: datetime | None, known_at: datetime
    ) -> list[Row]:
        """The slot's versions believed at `known_at` and covering `valid_at` (None: any),
        quarantined ones included: a point query as of any moment."""
        found = self._journals([slot_id]).get(slot_id)
        if found is None:
            return []
        row, events = found
        return versions_at(events, slot=row, valid_at=to_us(valid_at), known_at=epoch_us(known_at))

    def versions_at_each(
        self, slot_ids: Sequence[str], *, valid_at: datetime | None, known_at: datetime
    ) -> dict[str, list[Row]]:
        """`versions_at` of many slots: their heads in one read, pages in another."""
        v, k = to_us(valid_at), epoch_us(known_at)
        out = {}
        for sid, (row, events) in self._journals(slot_ids).items():
            found = versions_at(events, slot=row, valid_at=v, known_at=k)
            if found:
                out[sid] = found
        return out

    def _journals(self, slot_ids: Sequence[str]) -> dict[str, tuple[Row, list[Event]]]:
        """Each stored slot's row and journal events, pages (cached: a page is written once)
        then tail."""
        heads = self.slot_heads(slot_ids)
        if self.db.rollbacks != self._pages_at:  # a page written then rolled back: forget
            self._pages.clear()
            self._pages_at = self.db.rollbacks
        want = [f"{s}{SEP}#{n}" for s, h in heads.items() for n in range(_tail(h).pages)]
        todo = [p for p in want if p not in self._pages]
        if todo:
            if len(self._pages) + len(todo) > PAGES_KEPT:
                self._pages.clear()
            for pid, page in self._keys.read("SlotPage", todo, ("events",)).items():
                self._pages[pid] = page["events"]
        out = {}
        for sid, h in heads.items():
            events: list[Event] = []
            for n in range(_tail(h).pages):
                text = self._pages.get(f"{sid}{SEP}#{n}")
                if text is None:
                    raise StoreError(f"internal: a journal page of {sid!r} is missing")
                events += unpack_events(text)
            events += unpack_events(_tail(h).tail)
            out[sid] = (h.row, events)
        return out

    def line_windows(self, asks: Mapping[str, LineAsk]) -> dict[str, LineWindow]:
        """Per line id: its slot and the reach a write needs (None: the whole line)."""
        rows = self._keys.read("Line", list(asks), _LINE_READ)
        layouts: dict[str, Layout] = {}
        spans: dict[str, tuple[int, int]] = {}
        want: list[str] = []
        for lid, r in rows.items():
            layout = layouts[lid] = Layout.of(r["dir"])
            if not layout.inline:
                i, j = spans[lid] = layout.span(asks[lid].reach)
                want += [page_id(lid, n) for n in layout.numbers[i : j + 1]]
        pages = self._keys.read("LinePage", want, ("entries",))
        out: dict[str, LineWindow] = {}
        for lid, ask in asks.items():
            row, reach = rows.get(lid), ask.reach
            if row is None:
                out[lid] = LineWindow(
                    lid,
                    ask.slot_id,
                    ask.namespace,
                    ask.subject,
                    [],
                    None,
                    None,
                    True,
                    reach is None,
                )
                continue
            base = _version_base(row["slot_id"], row["namespace"], row["subject"])
            layout, span = layouts[lid], spans.get(lid, (0, 0))
            if layout.inline:
                loaded = unpack_run(row["entries"], base)
                after_pages: datetime | None = None
            else:
                loaded = []
                for n in layout.numbers[span[0] : span[1] + 1]:
                    page = pages.get(page_id(lid, n))
                    if page is None:
                        raise StoreError(f"internal: a page of line {lid!r} is missing")
                    loaded += unpack_run(page["entries"], base)
                after_pages = layout.after(span[1])
            if reach is None:
                i, j = 0, len(loaded)
            else:
                i, j = window_of(loaded, reach)
            after = loaded[j].at if j < len(loaded) else after_pages
            out[lid] = LineWindow(
                lid,
                row["slot_id"],
                row["namespace"],
                row["subject"],
                loaded[i:j],
                after,
                row["changed_at"],
                False,
                reach is None,
                _Paged(layout, span, loaded, (i, j)),
            )
        return out

    def assertion(self, assertion_id: str) -> Row | None:
        rows = self.db.query("MATCH (a:Assertion {id: $id}) RETURN a", id=assertion_id)
        return rows[0]["a"] if rows else None

    def assertions_by_id(self, ids: Sequence[str]) -> dict[str, Row]:
        found = self._keys.seek("Assertion", list(ids), _ASSERTION_READ)
        return {i: {"id": i, **r} for i, r in found.items()}

    def quarantined_claims(self, namespace: str) -> list[Row]:
        """Quarantined assertions still standing (not retracted): consolidation's input."""
        return [
            r["a"]
            for r in self.db.query(
                "MATCH (a:Assertion) WHERE a.namespace = $ns AND a.quarantined"
                " AND a.retracted_at IS NULL AND a.op = $op RETURN a",
                ns=namespace,
                op="assert",
            )
        ]

    def assertions_citing(self, namespace: str, episode_id: str) -> list[Row]:
        return [
            r["a"]
            for r in self.db.query(
                "MATCH (a:Assertion) WHERE a.namespace = $ns AND list_contains(a.evidence, $ep)"
                " RETURN a",
                ns=namespace,
                ep=episode_id,
            )
        ]

    def slots_of_predicate(self, namespace: str, predicate: str) -> list[str]:
        rows = self.db.query(
            "MATCH (s:Slot) WHERE s.namespace = $ns AND s.predicate = $p RETURN s.id AS id",
            ns=namespace,
            p=predicate,
        )
        return [r["id"] for r in rows]

    def slot_version_ids(self, slot_id: str) -> list[str]:
        """Every stored version of the slot, read from the Fact rows themselves (an
        erase must miss none): one hop from the subject, whose id the slot id holds."""
        parts = slot_id.split(SEP)
        if len(parts) != 3 or not parts[1]:
            return []
        rows = self.db.query(f"{SLOT_FACTS} RETURN f.id AS id", sid=parts[1], slot=slot_id)
        return [r["id"] for r in rows]

    # --- the write ---------------------------------------------------------------------------
    def write_facts(self, w: FactWrite, *, heads: Mapping[str, SlotHead] | None = None) -> None:
        """Store what a write did: its nodes, each touched slot's journal events, each
        edited line's pages. `heads`: the stored slots' heads as read (else read now)."""
        heads = dict(heads or {})
        events = _events_by_slot(w)
        known = {s["id"] for s in w.slots}
        missing = [s for s in events if s not in heads and s not in known]
        if missing:
            heads.update(self.slot_heads(missing))
        nodes: list[Node] = []
        for s in w.slots:
            h = SlotHead(dict(s), new=True)
            nodes += _journal_nodes(h, events.get(s["id"], []))
        for sid, evs in events.items():
            if sid in known:
                continue
            head = heads.get(sid)
            if head is None:
                raise StoreError(f"internal: a write to a slot that is not stored ({sid!r})")
            nodes += _journal_nodes(head, evs)
        doomed_pages: list[str] = []
        for edit in w.lines:
            more, gone = _line_nodes(edit, w.at)
            nodes += more
            doomed_pages += gone
        if (
            not w.vanish
            and not doomed_pages
            and len({v["subject_id"] for v in w.insert}) <= 1
            and fits(len(w.entities), len(w.assertions), len(w.expire), len(w.insert), len(nodes))
        ):
            cypher, params = fused_write(
                entities=w.entities,
                assertions=w.assertions,
                nodes=nodes,
                expire=[v["id"] for v in w.expire],
                at=w.at,
                insert=w.insert,
            )
            rows = self.db.query(cypher, **params)
            if [r["n"] for r in rows] != [1]:
                raise StoreError("internal: a write to a slot found a row missing")
            return
        self._names.create_entities(w.entities)
        self.create_assertions(w.assertions)
        self.delete_versions([v["id"] for v in w.vanish])
        self.expire_versions([v["id"] for v in w.expire], w.at)
        self.create_versions(w.insert)
        self._delete_nodes("LinePage", doomed_pages)
        self._put_nodes(nodes)

    # --- node statements ----------------------------------------------------------------------
    def create_assertions(self, rows: Sequence[dict[str, Any]]) -> None:
        if len(rows) >= LOAD_MIN:
            load_rows(
                self.db,
                f"CREATE (:Assertion {{{cols(ASSERTION_COLUMNS)}}})",
                ASSERTION_COLUMNS,
                rows,
                fill=True,  # as `assertion_row` fills them
            )
            return
        for r in rows:
            self.db.query(
                f"CREATE (:Assertion {{{param_props(ASSERTION_COLUMNS)}}})", **assertion_row(r)
            )

    def retract_assertion(self, assertion_id: str, at: datetime, reason: str | None) -> None:
        self.db.query(
            "MATCH (a:Assertion {id: $id}) SET a.retracted_at = $at, a.retract_reason = $reason",
            id=assertion_id,
            at=at,
            reason=reason,
        )

    def set_assertion_evidence(self, assertion_id: str, evidence: list[str]) -> None:
        self.db.query(
            "MATCH (a:Assertion {id: $id}) SET a.evidence = $ev", id=assertion_id, ev=evidence
        )

    def delete_assertion(self, assertion_id: str) -> None:
        self.db.query("MATCH (a:Assertion {id: $id}) DETACH DELETE a", id=assertion_id)

    def create_versions(self, rows: Sequence[dict[str, Any]]) -> None:
        if len(rows) >= LOAD_MIN:
            load_rows(self.db, _CREATE_VERSIONS, FACT_COLUMNS, rows, fill=True)  # as `fact_row`
            return
        for r in rows:
            self.db.query(
                "MATCH (e:Entity {id: $subject_id}), (o:Entity {id: $object_id})"
                f" CREATE (f:Fact {{{param_props(FACT_COLUMNS)}}}),"
                " (e)-[:SUBJ]->(f), (f)-[:OBJ]->(o)",
                **fact_row(r),
            )

    def expire_versions(self, version_ids: Sequence[str], at: datetime) -> None:
        if self._keys.seek_pays(len(version_ids)):
            # every id exists (this write read it): MATCH, one seek each, SET them all
            for chunk in seek_chunks(version_ids):
                self._chained("Fact", chunk, "SET {x}.expired_at = $at", at=at)
            return
        for part in chunks(list(version_ids), SCAN_BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (f:Fact {id: i}) SET f.expired_at = $at",
                ids=list(part),
                at=at,
            )

    def delete_versions(self, version_ids: Sequence[str]) -> None:
        if len(version_ids) <= FEW:
            for i in version_ids:
                self.db.query("MATCH (f:Fact {id: $id}) DETACH DELETE f", id=i)
            return
        for chunk in chunks(list(version_ids), SCAN_BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (f:Fact {id: i}) DETACH DELETE f", ids=list(chunk)
            )

    def write_histories(self, histories: Sequence[History], *, replace: bool) -> None:
        """Slots with their whole histories written afresh (restore, erase): (slot row,
        log, versions) each, journalled; `replace` deletes the slots' journals first."""
        self.write_journals(
            [(row, state_events(log, versions)) for row, log, versions in histories],
            replace=replace,
        )

    def write_journals(
        self, journals: Sequence[tuple[Mapping[str, Any], Sequence[Event]]], *, replace: bool
    ) -> None:
        """`write_histories` with the events made already (the upgrade packs them itself)."""
        if replace:
            heads = self.slot_heads([row["id"] for row, _ in journals])
            pages = [f"{s}{SEP}#{n}" for s, h in heads.items() for n in range(_tail(h).pages)]
            for p in pages:  # the same ids are written again below
                self._pages.pop(p, None)
            self._delete_nodes("SlotPage", pages)
            self._delete_nodes("Slot", list(heads))
        nodes: list[Node] = []
        for row, events in journals:
            head = _Tail()
            for k in range(0, max(0, len(events) - PAGE_EVENTS), PAGE_EVENTS):
                page = {
                    "id": f"{row['id']}{SEP}#{head.pages}",
                    "events": pack_events(events[k : k + PAGE_EVENTS]),
                }
                nodes.append(Node("SlotPage", page))
                head.pages += 1
            rest = events[head.pages * PAGE_EVENTS :]
            head.tail, head.tail_n = pack_events(rest), len(rest)
            nodes.append(
                Node(
                    "Slot",
                    {
                        **slot_columns(row),
                        "pages": head.pages,
                        "tail_n": head.tail_n,
                        "tail": head.tail,
                    },
                )
            )
        self._put_nodes(nodes)

    def _chained(self, table: str, keys: Sequence[str], action: str, **params: Any) -> None:
        """One statement seeking each key of `table` (`MATCH ... MATCH ...`), then doing
        `action` to them all (`{x}` stands for each node: "SET {x}.expired_at = $at")."""
        k = len(keys)
        first, _, rest = action.partition(" ")
        self.db.query(
            " ".join(f"MATCH (x{j}:{table} {{id: $k{j}}})" for j in range(k))
            + f" {first} "
            + ", ".join(rest.format(x=f"x{j}") for j in range(k)),
            **params,
            **{f"k{j}": i for j, i in enumerate(keys)},
        )

    def _put_nodes(self, nodes: Sequence[Node]) -> None:
        """Create each node, replacing the stored one where `replace` says so."""
        by_table: dict[str, list[Node]] = {}
        for n in nodes:
            by_table.setdefault(n.table, []).append(n)
        for table, group in by_table.items():
            self._delete_nodes(table, [n.row["id"] for n in group if n.replace])
            columns = NODE_COLUMNS[table]
            rows = [n.row for n in group]
            if len(rows) >= LOAD_MIN:
                load_rows(self.db, f"CREATE (:{table} {{{cols(columns)}}})", columns, rows)
                continue
            for r in rows:
                self.db.query(
                    f"CREATE (:{table} {{{param_props(columns)}}})", **{c: r[c] for c in columns}
                )

    def _delete_nodes(self, table: str, ids: Sequence[str]) -> None:
        if table not in NODE_COLUMNS:
            raise ValueError(table)
        if not ids:
            return
        if self._keys.seek_pays_in(table, len(ids)):
            for chunk in seek_chunks(ids):
                self._chained(table, chunk, "DELETE {x}")
            return
        for part in chunks(list(ids), SCAN_BATCH):
            self.db.query(f"UNWIND $ids AS i MATCH (x:{table} {{id: i}}) DELETE x", ids=list(part))


def _tail(h: SlotHead) -> _Tail:
    """The journal tail a head carries (a new slot's: empty)."""
    return h.handle if isinstance(h.handle, _Tail) else _Tail()


def slot_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """A slot's own columns (a row may carry more)."""
    return {c: row[c] for c in ("id", "namespace", "subject_id", "predicate", "subject")}


def _version_base(slot_id: str, namespace: str, subject: str) -> dict[str, Any]:
    _, subject_id, predicate = slot_id.split(SEP)
    return {
        "namespace": namespace,
        "slot_id": slot_id,
        "subject_id": subject_id,
        "subject": subject,
        "predicate": predicate,
    }


def _events_by_slot(w: FactWrite) -> dict[str, list[Event]]:
    """Each touched slot's journal events of this write, in fold order."""
    out: dict[str, dict[str, list[Any]]] = {}

    def of(slot: str) -> dict[str, list[Any]]:
        return out.setdefault(slot, {"a": [], "v": [], "x": [], "d": [], "r": []})

    for a in w.assertions:
        of(a["slot_id"])["a"].append(a)
    for v in w.insert:
        of(v["slot_id"])["v"].append(v)
    for v in w.expire:
        of(v["slot_id"])["x"].append((v["id"], w.at))
    for v in w.vanish:
        of(v["slot_id"])["d"].append(v["id"])
    for aid, slot, why in w.retract:
        of(slot)["r"].append((aid, w.at, why))
    return {
        s: journal_events(
            assertions=e["a"], inserted=e["v"], expired=e["x"], vanished=e["d"], retracted=e["r"]
        )
        for s, e in out.items()
    }


def _journal_nodes(h: SlotHead, events: Sequence[Event]) -> list[Node]:
    """The Slot row with the events appended to its tail (and a page, if the tail was full)."""
    t = _tail(h)
    row = {**h.row, "pages": t.pages, "tail_n": t.tail_n, "tail": t.tail}
    out: list[Node] = []
    if t.tail_n and t.tail_n + len(events) > PAGE_EVENTS:
        out.append(Node("SlotPage", {"id": f"{h.row['id']}{SEP}#{t.pages}", "events": t.tail}))
        row.update(pages=t.pages + 1, tail_n=0, tail="[]")
    row["tail"] = append_text(row["tail"], events)
    row["tail_n"] += len(events)
    out.append(Node("Slot", row, replace=not h.new))
    return out


def _line_nodes(edit: LineEdit, at: datetime) -> tuple[list[Node], list[str]]:
    """The Line row (and pages) after an edit, and the ids of pages it no longer uses.

    A whole line rewritten (or one inline) is laid out afresh: inline while it fits,
    else in pages numbered after every page it had. A window of a paged line rewrites
    the pages its window was read from."""
    win = edit.window
    at_ = win.handle if isinstance(win.handle, _Paged) else _Paged()
    layout = at_.layout
    every = [] if layout.inline else [page_id(win.line_id, n) for n in layout.numbers]
    i, j = at_.cut
    if win.whole or layout.inline:
        run = list(edit.run) if win.whole else [*at_.loaded[:i], *edit.run, *at_.loaded[j:]]
        base, (a, b), old = Layout(next_number=layout.next_number), (0, -1), every
    else:
        run = [*at_.loaded[:i], *edit.run, *at_.loaded[j:]]
        (a, b), base = at_.span, layout
        old = [page_id(win.line_id, n) for n in layout.numbers[a : b + 1]]
    row = {
        "id": win.line_id,
        "namespace": win.namespace,
        "slot_id": win.slot_id,
        "subject": win.subject,
    }
    line = Node("Line", {**row, "changed_at": at, "entries": None, "dir": None}, not win.new)
    if (win.whole or layout.inline) and len(run) <= INLINE:
        line.row["entries"] = pack_run(run)  # an emptied line stays, with its last change
        return [line], old
    new_layout, pages, _ = rechunk(base, a, b, run)
    line.row["dir"] = new_layout.directory()
    written = {page_id(win.line_id, n): p for n, p in pages}
    nodes = [
        Node("LinePage", {"id": pid, "entries": pack_run(p)}, replace=pid in old)
        for pid, p in written.items()
    ]
    return [*nodes, line], [p for p in old if p not in written]

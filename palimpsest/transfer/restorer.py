"""Restore: an export back into an empty namespace, with the same ids, times and answers.

    >>> with Memory.open("elsewhere") as other:
    ...     other.restore(open("memory.jsonl"))         # same ids, same times, same answers

The export holds the assertion log (the truth) and the materialised versions
with their transaction times: the log alone cannot say which cardinality a
predicate had when (`define_predicate` re-reads a slot from then on), so
`restore` writes every row back exactly, versions included, and every as-of
answer comes back. A format-1 export (no versions) is rebuilt from its log with
the final cardinalities, the materialisation `erase` uses.
Recall rows (search text, vectors) are derived too: the engine's recall
backfill writes them after the restore, with this memory's embedder.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import _names as names
from ..engine.context import Context
from ..engine.entities import EntityIndex
from ..engine.events import Events
from ..engine.materialise import Materialiser, SlotState
from ..engine.rows import slot_id, slot_row
from ..engine.vocabulary import Vocabulary, default_predicates
from ..errors import Conflict, ValidationError
from ..storage import FactWrite
from ._import import ExportData, parse_export

if TYPE_CHECKING:
    from ..recall.embed_worker import EmbedWorker
    from ..recall.index import RecallIndex


class Restorer:
    """`restore`: one export, checked whole, then written in one transaction."""

    def __init__(
        self,
        ctx: Context,
        vocab: Vocabulary,
        entities: EntityIndex,
        materialiser: Materialiser,
        *,
        index: RecallIndex,
        embed: EmbedWorker,
        events: Events,
    ) -> None:
        self._ctx = ctx
        self._vocab = vocab
        self._entities = entities
        self._mat = materialiser
        self._index = index
        self._embed = embed
        self._events = events

    def restore(self, lines: Iterable[str], *, namespace: str | None = None) -> dict[str, int]:
        """Restore an export into an empty namespace: same ids, times and answers.

        `namespace` defaults to the one the export came from. The whole file is
        checked before anything is written, and written in one transaction.
        Raises ValidationError (naming the line) for a bad file and Conflict
        when the namespace holds anything or an id is taken elsewhere in this
        memory (e.g. restoring one export into two namespaces of one directory).
        """
        data = parse_export(lines)
        counts = {k: len(v) for k, v in data.rows.items()}  # the plan consumes the rows
        origin = names.check_namespace(data.header.get("namespace"))
        ctx = self._ctx
        ns = ctx.ns(origin if namespace is None else namespace)
        with ctx.lock:
            self._check_empty(ns, data)
            saved = ctx.saved()
            try:
                plan = self._restore_plan(ns, data)  # primes the name cache: cleared below
                with ctx.store.write():
                    self._write_restore(ns, plan)
            except BaseException:
                ctx.restore(saved)
                raise
            finally:
                self._events.names_changed()
                self._vocab.forget(ns)
            times = [t for t in plan["times"] if t is not None]
            if times and (ctx.last_k is None or max(times) > ctx.last_k):
                ctx.last_k = max(times)
            ctx.seq = max([ctx.seq, *(a["seq"] for a in plan["assertions"])])
            self._events.restored(ns)
        # search rows and vectors, as recall would write them on first use
        self._index.backfill(ns)
        self._embed.backfill(ns)  # entity-name and statement vectors (not exported)
        return counts

    def _check_empty(self, ns: str, data: ExportData) -> None:
        ts = self._ctx.store.transfer
        held = {k: v for k, v in ts.occupied(ns).items() if v}
        if held:
            raise Conflict(
                f"namespace {ns!r} is not empty ({held}); restore into an empty namespace"
                " or a new directory",
                namespace=ns,
            )
        ids: dict[str, list[str]] = {
            "Entity": [r["id"] for r in data.rows["entity"]],
            "Episode": [r["id"] for r in data.rows["episode"]],
            "Assertion": [r["id"] for r in data.rows["assertion"]],
            "Tombstone": [r["id"] for r in data.rows["tombstone"]],
            "Fact": [r["id"] for r in data.rows["version"]],
        }
        target = ts.aux_columns()
        for r in data.rows["aux"]:
            ids.setdefault(r["table"], []).append(r["row"]["id"])
        for table, cols in data.header["tables"].items():
            have = target.get(table, {})
            if any(have.get(c) != t for c, t in cols.items()):
                raise ValidationError(
                    f"this memory's {table} table does not have the export's columns {cols};"
                    " upgrade Palimpsest",
                    table=table,
                )
        for table, some_ids in ids.items():
            taken = ts.existing_ids(table, some_ids)
            if taken:
                some = sorted(taken)[:3]
                raise Conflict(
                    f"{len(taken)} {table} ids of this export already exist in this memory"
                    f" (e.g. {some}); restore into a new directory",
                    namespace=ns,
                )

    def _restore_plan(self, ns: str, data: ExportData) -> dict[str, Any]:
        """Every row to write, versions included, computed before the transaction."""
        rows = data.rows

        def strip(r: dict[str, Any], **more: Any) -> dict[str, Any]:
            # in place: a copy per row would double a large restore's memory
            r.pop("_line", None)
            r.update(more)
            return r

        preds = {p.name: p.model_dump() for p in default_predicates()}
        stored_preds = [strip(p) for p in rows["predicate"]]
        preds.update({p["name"]: p for p in stored_preds})
        entities = [strip(e, namespace=ns) for e in rows["entity"]]
        keys = {r["key"]: r["entity_id"] for r in rows["entity_key"]}
        for e in entities:
            keys.setdefault(e["key"], e["id"])
        self._entities.names.update({e["id"]: e["name"] for e in entities})
        episodes = [strip(e, namespace=ns) for e in rows["episode"]]
        slots = {
            r["id"]: r
            for r in (
                slot_row(ns, s["subject_id"], s["predicate"], s["subject"]) for s in rows["slot"]
            )
        }
        assertions = []
        for a in rows["assertion"]:
            row = strip(a, namespace=ns)
            row["slot_id"] = slot_id(ns, row.pop("subject_id"), row.pop("predicate"))
            assertions.append(row)
        logs: dict[str, list[dict[str, Any]]] = {s: [] for s in slots}
        for a in assertions:
            logs[a["slot_id"]].append(a)
        for p in {s["predicate"] for s in slots.values()} - set(preds):
            # a relation stored without its definition: the engine's own fallback
            auto = {"name": p, "cardinality": "many", "aliases": [], "inverse": None}
            preds[p] = {**auto, "object_kind": "entity", "origin": "auto"}
            stored_preds.append(preds[p])
        given = self._given_versions(data, assertions) if data.header["version"] >= 2 else None
        rows["version"].clear()  # now rows of their own (or rebuilt, for format 1)
        states, versions = [], []
        for sid, meta in slots.items():
            log = logs[sid]
            if given is None:  # format 1: no versions, the log replayed with today's cardinality
                vs = self._mat.versions_from_log(log, preds[meta["predicate"]]["cardinality"])
            else:
                vs = given.get(sid, [])
            versions += vs
            states.append(SlotState(meta, log, vs, new=True))
        tombs = []
        for t in rows["tombstone"]:
            row = strip(t)
            subject_id, predicate = row.pop("subject_id"), row.pop("predicate")
            tslot = None
            if subject_id is not None and predicate is not None:
                tslot = slot_id(ns, subject_id, predicate)
            tombs.append({**row, "namespace": ns, "slot_id": tslot})
        # consolidation rows name slots by id, which embeds the namespace
        prefix, origin = f"{ns}\x1f", f"{data.header['namespace']}\x1f"

        def moved(v: Any) -> Any:
            if isinstance(v, str) and v.startswith(origin):
                return prefix + v[len(origin) :]
            if isinstance(v, list):
                return [moved(x) for x in v]
            return v

        aux: dict[str, list[dict[str, Any]]] = {}
        for r in rows["aux"]:
            row = {c: moved(v) for c, v in r["row"].items()}
            aux.setdefault(r["table"], []).append({**row, "namespace": ns})
        times = [e["created_at"] for e in entities]
        times += [e["recorded_at"] for e in episodes] + [t["erased_at"] for t in tombs]
        times += [a["recorded_at"] for a in assertions] + [a["retracted_at"] for a in assertions]
        times += [v["expired_at"] for v in versions]
        times += [c["changed_at"] for c in aux.get("PredicateChange", [])]
        return {
            "predicates": stored_preds,
            "entities": entities,
            "keys": [{"id": f"{ns}\x1f{k}", "entity_id": v} for k, v in sorted(keys.items())],
            "episodes": episodes,
            "slots": states,
            "cardinality": {p: preds[p]["cardinality"] for p in preds},
            "assertions": assertions,
            "versions": versions,
            "tombstones": tombs,
            "aux": aux,
            "times": times,
        }

    def _given_versions(
        self, data: ExportData, assertions: list[dict[str, Any]]
    ) -> dict[str, list[dict[str, Any]]]:
        """The export's versions as stored rows, by slot: times from the file, the rest
        (slot, object, names, content) from their assertion, as a write derives them."""
        by_id = {a["id"]: a for a in assertions}
        out: dict[str, list[dict[str, Any]]] = {}
        for v in data.rows["version"]:
            a = by_id[v["assertion_id"]]
            row = self._mat.version_row(
                a, v["valid_from"], v["valid_to"], v["recorded_at"], v["expired_at"]
            )
            out.setdefault(a["slot_id"], []).append({**row, "id": v["id"]})
        return out

    def _write_restore(self, ns: str, plan: Mapping[str, Any]) -> None:
        store = self._ctx.store
        ts = store.transfer
        for p in plan["predicates"]:
            store.names.upsert_predicate(ns, p)
        ts.restore_entities(plan["entities"], plan["keys"])
        ts.restore_episodes(plan["episodes"])
        slots: list[SlotState] = plan["slots"]
        store.slots.write_histories([(st.row, st.log, st.versions) for st in slots], replace=False)
        store.slots.create_assertions(plan["assertions"])
        store.slots.create_versions(plan["versions"])
        # each line as its starts stand at the latest moment the export knows
        times = [t for t in plan["times"] if t is not None]
        if slots and times:
            k = max(times)
            cards = {st.row["id"]: plan["cardinality"][st.row["predicate"]] for st in slots}
            states = {st.row["id"]: st for st in slots}
            store.slots.write_facts(FactWrite(at=k, lines=self._mat.line_edits(states, cards, k)))
        for t in plan["tombstones"]:
            store.facts.create_tombstone(t)
        columns = ts.aux_columns()
        for table, aux_rows in plan["aux"].items():
            ts.restore_aux(table, columns[table], aux_rows)

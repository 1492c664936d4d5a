"""Export and import: a namespace out to JSON Lines and back, losslessly; importers.

    >>> mem.export("memory.jsonl")                     # -> {"assertion": 12, ...}
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

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from . import _names as names
from ._core import _slot_id, _slot_row
from ._episodes import _Episodes
from ._materialise import _packed, _SlotState
from ._vocabulary import default_predicates
from .errors import Conflict, ValidationError
from .graph import SCHEMA_VERSION
from .graph._transfer import TransferStore
from .transfer import (
    KINDS,
    ExportData,
    aux_record,
    dumps,
    header,
    parse_export,
    parse_locomo,
    parse_transcript,
    record,
    trailer,
)

Progress = Callable[[int, int], None]  # (done, total)


class _Transfer(_Episodes):
    def namespaces(self) -> list[str]:
        """The namespaces that hold anything: episodes, entities, facts, tombstones or
        predicate definitions (sorted; a namespace only ever read holds nothing).

        >>> mem.assert_fact("team", "uses", "Kuzu", namespace="work")
        >>> mem.namespaces()
        ['work']
        """
        self._check_open()
        return TransferStore(self._store).namespaces()

    # --- export ----------------------------------------------------------------------------
    def export_lines(self, *, namespace: str | None = None) -> Iterator[str]:
        """The namespace as export records, one JSON document per line (no newlines).

        The rows are read when this is called, under the write lock, so the
        export is one consistent state even while other threads write. The lines
        are held in memory: `export` streams to a file instead.
        """
        lines: list[str] = []
        self._export(self._ns(namespace), lines.append)
        return iter(lines)

    def _export(self, ns: str, emit: Callable[[str], object]) -> dict[str, int]:
        """Emit the export line by line, the rows streamed from the store; the counts.

        The write lock is held throughout, so the lines are one consistent state.
        """
        ts = TransferStore(self._store)
        flush = getattr(self, "_flush_uses", None)  # recall's uses, batched in memory
        with self._lock:
            if flush is not None:
                flush()
            kinds = [k for k in KINDS if k != "aux"]
            tables = ts.aux_columns()
            counts = {k: ts.count(k, ns) for k in kinds if k != "predicate"}
            counts["predicate"] = len(ts.predicates(ns))
            counts = {k: counts[k] for k in kinds}
            counts["aux"] = sum(ts.count(t, ns) for t in tables)
            head = header(
                namespace=ns,
                schema_version=SCHEMA_VERSION,
                exported_at=self.now(),
                embedder=self._rs.embedder_identity(),
                counts=counts,
                tables=tables,
            )
            emit(dumps(head))
            written = dict.fromkeys(counts, 0)
            for kind in kinds:
                for row in ts.stream(kind, ns):
                    emit(dumps(record(kind, row)))
                    written[kind] += 1
            for table, cols in tables.items():
                for row in ts.stream(table, ns):
                    emit(dumps(aux_record(table, row, cols)))
                    written["aux"] += 1
            emit(dumps(trailer(written)))
        return written

    def export(
        self, target: str | Path | IO[str], *, namespace: str | None = None
    ) -> dict[str, int]:
        """Write the namespace to `target` (a path, written atomically, or a text file),
        line by line as the rows are read.

        >>> mem.export("memory.jsonl")
        {'predicate': 1, 'entity': 3, 'entity_key': 3, 'episode': 2, ...}
        """
        ns = self._ns(namespace)
        if not isinstance(target, str | Path):
            return self._export(ns, lambda line: target.write(line + "\n"))
        path = Path(target)
        tmp = path.with_name(f".{path.name}.partial")
        try:
            with tmp.open("w", encoding="utf-8") as fh:
                counts = self._export(ns, lambda line: fh.write(line + "\n"))
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        tmp.replace(path)
        return counts

    # --- restore ----------------------------------------------------------------------------
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
        ns = self._ns(origin if namespace is None else namespace)
        with self._lock:
            self._check_empty(ns, data)
            saved = (self._last_k, self._seq)
            try:
                plan = self._restore_plan(ns, data)  # primes the name cache: cleared below
                with self._store.write():
                    self._write_restore(ns, plan)
            except BaseException:
                self._last_k, self._seq = saved
                raise
            finally:
                self._forget_cache()
                self._predicates.pop(ns, None)
                self._aliases.pop(ns, None)
            times = [t for t in plan["times"] if t is not None]
            if times and (self._last_k is None or max(times) > self._last_k):
                self._last_k = max(times)
            self._seq = max([self._seq, *(a["seq"] for a in plan["assertions"])])
            self._recall_ix().pop(ns, None)
        # search rows and vectors, as recall would write them on first use
        self._recall_backfill(ns)
        self._embed_backfill(ns)  # entity-name and statement vectors (not exported)
        return counts

    def _check_empty(self, ns: str, data: ExportData) -> None:
        ts = TransferStore(self._store)
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
        self._names.update({e["id"]: e["name"] for e in entities})
        episodes = [strip(e, namespace=ns) for e in rows["episode"]]
        slots = {
            r["id"]: r
            for r in (
                _slot_row(ns, s["subject_id"], s["predicate"], s["subject"]) for s in rows["slot"]
            )
        }
        assertions = []
        for a in rows["assertion"]:
            row = strip(a, namespace=ns)
            row["slot_id"] = _slot_id(ns, row.pop("subject_id"), row.pop("predicate"))
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
                vs = self._versions_from_log(log, preds[meta["predicate"]]["cardinality"])
            else:
                vs = given.get(sid, [])
            versions += vs
            states.append(_packed(_SlotState(meta, log, vs, new=True)))
        tombs = []
        for t in rows["tombstone"]:
            row = strip(t)
            subject_id, predicate = row.pop("subject_id"), row.pop("predicate")
            tslot = None
            if subject_id is not None and predicate is not None:
                tslot = _slot_id(ns, subject_id, predicate)
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
            row = self._version_row(
                a, v["valid_from"], v["valid_to"], v["recorded_at"], v["expired_at"]
            )
            out.setdefault(a["slot_id"], []).append({**row, "id": v["id"]})
        return out

    def _write_restore(self, ns: str, plan: Mapping[str, Any]) -> None:
        ts = TransferStore(self._store)
        for p in plan["predicates"]:
            self._store.upsert_predicate(ns, p)
        ts.restore_entities(plan["entities"], plan["keys"])
        ts.restore_episodes(plan["episodes"])
        self._store.create_slots(plan["slots"])
        self._store.create_assertions(plan["assertions"])
        self._store.create_versions(plan["versions"])
        for t in plan["tombstones"]:
            self._store.create_tombstone(t)
        columns = ts.aux_columns()
        for table, aux_rows in plan["aux"].items():
            ts.restore_aux(table, columns[table], aux_rows)

    # --- importers ---------------------------------------------------------------------------
    def import_transcript(
        self,
        lines: Iterable[str],
        *,
        namespace: str | None = None,
        batch: int = 500,
        progress: Progress | None = None,
    ) -> dict[str, int]:
        """Chat turns from JSON Lines ({speaker, text, timestamp, session}) via remember_many.

        >>> mem.import_transcript(open("chat.jsonl"))
        {'episodes': 120, 'facts': 31}

        Every line is checked before the first write; batches are separate
        transactions, and remembering is idempotent, so a rerun after a crash
        completes the import without duplicates.
        """
        return self._remember_items(parse_transcript(lines), namespace, batch, progress)

    def import_locomo(
        self,
        text: str,
        *,
        conversations: Iterable[str] | None = None,
        namespace: str | None = None,
        batch: int = 500,
        progress: Progress | None = None,
    ) -> dict[str, int]:
        """LoCoMo conversations (its JSON file, or one sample) as episodes.

        >>> mem.import_locomo(Path("locomo10.json").read_text(), conversations=["conv-26"])
        """
        items = parse_locomo(text, conversations=conversations)
        return self._remember_items(items, namespace, batch, progress)

    def _remember_items(
        self,
        items: list[dict[str, Any]],
        namespace: str | None,
        batch: int,
        progress: Progress | None,
    ) -> dict[str, int]:
        ns = self._ns(namespace)
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValidationError("batch: a positive integer", field="batch")
        clean = []
        for i, item in enumerate(items):
            where = item.get("_line")
            it = {k: v for k, v in item.items() if k != "_line"}
            try:
                self._parse_episode(ns, i, it)
            except ValidationError as e:
                at = f"line {where}" if where is not None else f"item {i}"
                raise ValidationError(f"{at}: {e.message}", line=where, index=i) from None
            clean.append(it)
        episodes = facts = 0
        for start in range(0, len(clean), batch):
            stored = self.remember_many(clean[start : start + batch], namespace=ns)
            episodes += len(stored)
            facts += sum(len(ep.facts) for ep in stored)
            if progress is not None:
                progress(min(start + batch, len(clean)), len(clean))
        return {"episodes": episodes, "facts": facts}

"""Export and import: a namespace out to JSON Lines and back, losslessly; importers.

    >>> mem.export("memory.jsonl")                     # -> {"assertion": 12, ...}
    >>> with Memory.open("elsewhere") as other:
    ...     other.restore(open("memory.jsonl"))         # same ids, same times, same answers

The export holds the assertion log (the truth), not the versions: `restore`
writes the rows back exactly and rebuilds every slot's versions from its log
with the same materialisation `erase` uses, so every as-of answer comes back.
Recall rows (search text, vectors) are derived too: the engine's recall
backfill writes them after the restore, with this memory's embedder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from . import _names as names
from ._core import _packed, _slot_id, _SlotState
from ._episodes import _Episodes
from ._vocabulary import default_predicates
from .errors import Conflict, ValidationError
from .graph import SCHEMA_VERSION
from .graph._transfer import TransferStore
from .transfer import (
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
    # --- export ----------------------------------------------------------------------------
    def export_lines(self, *, namespace: str | None = None) -> Iterator[str]:
        """The namespace as export records, one JSON document per line (no newlines).

        The rows are read when this is called, under the write lock, so the
        export is one consistent state even while other threads write.
        """
        return iter(self._export(self._ns(namespace))[0])

    def _export(self, ns: str) -> tuple[list[str], dict[str, int]]:
        ts = TransferStore(self._store)
        with self._lock:
            rows = {
                "predicate": ts.predicates(ns),
                "entity": ts.entities(ns),
                "entity_key": ts.entity_keys(ns),
                "episode": ts.episodes(ns),
                "slot": ts.slots(ns),
                "assertion": ts.assertions(ns),
                "tombstone": ts.tombstones(ns),
            }
            embedder = self._rs.embedder_identity()
            tables = ts.aux_columns()
            aux = [aux_record(t, r, cols) for t, cols in tables.items() for r in ts.aux_rows(t, ns)]
        counts = {k: len(v) for k, v in rows.items()} | {"aux": len(aux)}
        head = header(
            namespace=ns,
            schema_version=SCHEMA_VERSION,
            exported_at=self.now(),
            embedder=embedder,
            counts=counts,
            tables=tables,
        )
        records = [record(kind, r) for kind, rs in rows.items() for r in rs] + aux
        return [dumps(head), *(dumps(r) for r in records), dumps(trailer(counts))], counts

    def export(
        self, target: str | Path | IO[str], *, namespace: str | None = None
    ) -> dict[str, int]:
        """Write the namespace to `target` (a path, written atomically, or a text file).

        >>> mem.export("memory.jsonl")
        {'predicate': 1, 'entity': 3, 'entity_key': 3, 'episode': 2, ...}
        """
        lines, counts = self._export(self._ns(namespace))
        if isinstance(target, str | Path):
            path = Path(target)
            tmp = path.with_name(f".{path.name}.partial")
            with tmp.open("w", encoding="utf-8") as fh:
                fh.writelines(line + "\n" for line in lines)
                fh.flush()
                os.fsync(fh.fileno())
            tmp.replace(path)
        else:
            target.writelines(line + "\n" for line in lines)
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
        return {k: len(v) for k, v in data.rows.items()}

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

        def strip(r: Mapping[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in r.items() if k != "_line"}

        preds = {p.name: p.model_dump() for p in default_predicates()}
        stored_preds = [strip(p) for p in rows["predicate"]]
        preds.update({p["name"]: p for p in stored_preds})
        entities = [{**strip(e), "namespace": ns} for e in rows["entity"]]
        keys = {r["key"]: r["entity_id"] for r in rows["entity_key"]}
        for e in entities:
            keys.setdefault(e["key"], e["id"])
        self._names.update({e["id"]: e["name"] for e in entities})
        episodes = [{**strip(e), "namespace": ns} for e in rows["episode"]]
        slots = {
            _slot_id(ns, s["subject_id"], s["predicate"]): {
                "id": _slot_id(ns, s["subject_id"], s["predicate"]),
                "namespace": ns,
                "subject_id": s["subject_id"],
                "predicate": s["predicate"],
                "subject": s["subject"],
            }
            for s in rows["slot"]
        }
        assertions = []
        for a in rows["assertion"]:
            row = strip(a)
            sid = _slot_id(ns, row.pop("subject_id"), row.pop("predicate"))
            assertions.append({**row, "namespace": ns, "slot_id": sid})
        logs: dict[str, list[dict[str, Any]]] = {s: [] for s in slots}
        for a in assertions:
            logs[a["slot_id"]].append(a)
        for p in {s["predicate"] for s in slots.values()} - set(preds):
            # a relation stored without its definition: the engine's own fallback
            auto = {"name": p, "cardinality": "many", "aliases": [], "inverse": None}
            preds[p] = {**auto, "object_kind": "entity", "origin": "auto"}
            stored_preds.append(preds[p])
        states, versions = [], []
        for sid, meta in slots.items():
            log = logs[sid]
            vs = self._versions_from_log(log, preds[meta["predicate"]]["cardinality"])
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

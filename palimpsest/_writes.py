"""Writing facts: assert, end and retract, validated at the boundary.

    >>> f = mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    >>> mem.retract(f.id, reason="user corrected it")

A write to a slot (subject, predicate) replays that slot's assertion log at
its transaction time K (`temporal.replay`), diffs the result against the
versions believed so far, expires what changed and inserts what is new
(_write_batch.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any

from . import _names as names
from ._core import (
    _AUTHOR_KINDS,
    _TRUSTED,
    UNSET,
)
from ._gc_pause import gc_paused
from ._time import TimeLike, opt_utc
from ._write_batch import _WriteBatch
from .errors import (
    AlreadyErased,
    Conflict,
    InvalidWindow,
    NotFound,
    ValidationError,
)
from .models import (
    AuthorKind,
    Fact,
)
from .transfer._format import json_lines

# Assertions per transaction of an import. A bulk write's expiry, version and slot-state
# statements each scan a whole table once, and its read of the stored slots turns from
# per-key seeks into one scan: their cost grows with the memory, and a larger call
# shares it. At 1M versions, with the collector paused (_gc_pause.py), between
# checkpoints: 5,000 items a call 5,670-6,010/s, 20,000 items 8,580-9,130/s
# (bench/README.md, session 7).
IMPORT_BATCH = 20_000
GC_PAUSE_MIN = 1_000  # items of an assert_many that pauses the cyclic collector (_gc_pause)


class _Writes(_WriteBatch):
    # --- writes -----------------------------------------------------------------------------
    def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        valid_from: TimeLike | None = UNSET,
        valid_to: TimeLike | None = None,
        confidence: float = 1.0,
        author_kind: AuthorKind = "user",
        evidence: Sequence[str] = (),
        quarantined: bool | None = None,
        occurred_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> Fact:
        """Record that subject-predicate-object holds over [valid_from, valid_to).

        Leaving `valid_from` out means "from the statement's reference time"
        (`occurred_at`, else now); `valid_from=None` means "since always".
        Non-user authors are quarantined unless `quarantined=False` is passed.
        """
        return self.assert_many(
            [
                {
                    "subject": subject,
                    "predicate": predicate,
                    "object": object,
                    "valid_from": valid_from,
                    "valid_to": valid_to,
                    "confidence": confidence,
                    "author_kind": author_kind,
                    "evidence": evidence,
                    "quarantined": quarantined,
                    "occurred_at": occurred_at,
                }
            ],
            namespace=namespace,
        )[0]

    def assert_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str | None = None
    ) -> list[Fact]:
        """Many assertions in one transaction; same keywords and same result as `assert_fact`.

        >>> mem.assert_many([{"subject": "user", "predicate": "likes", "object": "jazz"}])
        """
        ns = self._ns(namespace)
        rows = list(items)
        with self._lock, gc_paused() if len(rows) >= GC_PAUSE_MIN else nullcontext():
            seen: dict[str, str] = {}  # predicate as given -> its name, once per batch
            parsed = [self._parse_assert(ns, i, r, seen) for i, r in enumerate(rows)]
            written = self._write_assertions(ns, parsed, read_ahead=True)
            self._embed_flush()
            return written

    def end_fact(
        self,
        subject: str,
        predicate: str,
        object: str | None = None,
        *,
        at: TimeLike = UNSET,
        author_kind: AuthorKind = "user",
        evidence: Sequence[str] = (),
        occurred_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> Fact:
        """Record "no longer": what holds at `at` (default: now) stops holding from then.

        For a `one` predicate, `object=None` ends whatever holds. The returned
        record has `op="end"` and `applied` telling whether anything ended.
        """
        ns = self._ns(namespace)
        item = {
            "subject": subject,
            "predicate": predicate,
            "object": object,
            "valid_from": at,
            "author_kind": author_kind,
            "evidence": evidence,
            "occurred_at": occurred_at,
            "op": "end",
        }
        with self._lock:
            parsed = self._parse_assert(ns, 0, item)
            written = self._write_assertions(ns, [parsed])[0]
            self._embed_flush()
            return written

    def _parse_assert(
        self,
        ns: str,
        index: int,
        item: Mapping[str, Any],
        seen: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """One item of `assert_many` (or the keywords of `assert_fact`), validated.

        `seen` caches the predicate names already resolved in this batch."""
        if not isinstance(item, Mapping):
            raise ValidationError(f"item {index}: expected a mapping", index=index)
        known = {
            "subject",
            "predicate",
            "object",
            "valid_from",
            "valid_to",
            "confidence",
            "author_kind",
            "evidence",
            "quarantined",
            "occurred_at",
            "op",
            "at",
        }
        extra = set(item) - known
        if extra:
            raise ValidationError(f"item {index}: unknown keys {sorted(extra)}", index=index)
        op = item.get("op", "assert")
        if op not in ("assert", "end"):
            raise ValidationError(f"item {index}: op must be 'assert' or 'end'", index=index)
        subject = names.clean_name(item.get("subject"), field="subject")
        raw_pred = item.get("predicate")
        pred_name = seen.get(raw_pred) if seen is not None and isinstance(raw_pred, str) else None
        if pred_name is None:
            pred = self._find_predicate(ns, raw_pred)
            pred_name = pred.name if pred else names.predicate_key(raw_pred)
            if seen is not None and isinstance(raw_pred, str):
                seen[raw_pred] = pred_name
        obj = item.get("object")
        if op == "assert" or obj is not None:
            obj = names.clean_name(obj, field="object")
        author = item.get("author_kind", "user")
        if author not in _AUTHOR_KINDS:
            raise ValidationError(f"author_kind: one of {', '.join(_AUTHOR_KINDS)}", index=index)
        conf = item.get("confidence", 1.0)
        if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0.0 <= conf <= 1.0:
            raise ValidationError("confidence: a number in [0, 1]", index=index)
        evidence = item.get("evidence") or ()
        if isinstance(evidence, str) or not all(isinstance(e, str) for e in evidence):
            raise ValidationError("evidence: a list of episode ids", index=index)
        ref = opt_utc(item.get("occurred_at"), name="occurred_at")
        start_raw = item.get("at", UNSET) if op == "end" else UNSET
        if start_raw is UNSET:
            start_raw = item.get("valid_from", UNSET)
        start = UNSET if start_raw is UNSET else opt_utc(start_raw, name="valid_from")
        end = opt_utc(item.get("valid_to"), name="valid_to") if op == "assert" else None
        if op == "end" and start is None:
            raise InvalidWindow("at: an end needs a time ('since always' ends nothing)")
        if end is not None and start not in (UNSET, None) and end <= start:
            raise InvalidWindow(
                f"item {index}: valid_to {end.isoformat()} is not after valid_from "
                f"{start.isoformat()}",
                index=index,
            )
        quarantined = item.get("quarantined")
        if quarantined is None:
            quarantined = author not in _TRUSTED
        return {
            "op": op,
            "subject": subject,
            "predicate": pred_name,
            "object": obj,
            "valid_from": start,
            "valid_to": end,
            "reference": ref,
            "confidence": float(conf),
            "author_kind": author,
            "evidence": list(dict.fromkeys(evidence)),
            "quarantined": bool(quarantined),
        }

    def retract(
        self, fact_id: str, *, reason: str | None = None, namespace: str | None = None
    ) -> Fact:
        """Withdraw an assertion from now on; views known before now still see it.

        >>> mem.retract(f.id, reason="user corrected it")
        """
        ns = self._ns(namespace)
        why = None if reason is None else names.check_text(reason, field="reason", limit=2000)
        with self._lock:
            a = self._own_assertion(ns, fact_id)
            if a["retracted_at"] is not None:
                raise Conflict(f"{fact_id} was already retracted", id=fact_id)
            saved = (self._last_k, self._seq)
            try:
                with self._store.write():
                    k = self._tick()
                    self._store.retract_assertion(a["id"], k, why)
                    slot = a["slot_id"]
                    states = self._states({slot: {"id": slot}})
                    st = states[slot]
                    for row in st.log:
                        if row["id"] == a["id"]:
                            row.update(retracted_at=k, retract_reason=why)
                    plan = self._plan(states, {slot: self._cardinality(ns, slot)}, k)
                    for v in st.versions:
                        if v["assertion_id"] == a["id"] and v["expired_at"] is None:
                            v["expired_at"] = k  # a quarantined claim simply stops counting
                            plan.expire.append(v["id"])
                    self._apply(plan, states, k)
            except BaseException:
                self._last_k, self._seq = saved
                raise
            return self._assertion_fact(a, status="retracted", expired_at=k, reason=why)

    def _own_assertion(self, ns: str, fact_id: object) -> dict[str, Any]:
        if not isinstance(fact_id, str) or not fact_id:
            raise ValidationError("id: a non-empty string", field="id")
        a = self._store.assertion(fact_id)
        if a is None or a["namespace"] != ns:
            tomb = self._store.tombstone(fact_id)
            if tomb is not None and tomb["namespace"] == ns:
                raise AlreadyErased(f"{fact_id} was erased", id=fact_id)
            raise NotFound(f"no fact {fact_id[:80]!r}", id=fact_id[:80])
        return a

    # --- bulk import ----------------------------------------------------------------------------
    def import_facts(
        self, lines: Iterable[str], *, batch: int = IMPORT_BATCH, namespace: str | None = None
    ) -> int:
        """Assertions from JSON Lines (one `assert_many` item per line), in large batches.

        >>> mem.import_facts(open("facts.jsonl"))
        """
        count = 0
        chunk: list[dict[str, Any]] = []
        for _, item in json_lines(lines):
            chunk.append(item)
            if len(chunk) >= batch:
                count += len(self.assert_many(chunk, namespace=namespace))
                chunk = []
        if chunk:
            count += len(self.assert_many(chunk, namespace=namespace))
        return count

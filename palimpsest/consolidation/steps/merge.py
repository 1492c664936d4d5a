"""Consolidation step 2: merge entities that are one, reversibly.

    >>> mem.consolidate().counts.get("merged")
    1

A merge is itself a bitemporal event. At run time K every standing assertion
about a loser (as subject or object) is asserted again on the winner, with its
window, evidence, author and quarantine unchanged (origin "merge"), and the
original is retracted with the reason "merged into X". The loser's name and
alias keys then point at the winner, whose aliases list them. Queries known
before K see exactly what they saw before; nothing is deleted. `Unmerge`
(`unmerge.py`) reverses it the same way.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..._ids import _new_id
from ...engine.events import Events
from ...engine.vocabulary import Vocabulary
from .._merge import RELATIVE, Cluster, candidates, clusters, comparable
from .._run import Run
from .tools import Tools, copy_of

if TYPE_CHECKING:
    from ...recall.embed_worker import EmbedWorker
    from ...recall.embedder import Embedder

# Name vectors are written with the entities (recall/embed_worker.py). Names without one (a
# memory from before migration 6, written with no embedder, or a crash between a write
# and its vectors) are embedded and stored by this step, at most this many per run;
# the rest wait for `palimpsest reindex` (a warning says how many).
EMBED_MAX = 20_000
_log = logging.getLogger("palimpsest.consolidate")


class Merge:
    def __init__(
        self,
        tools: Tools,
        *,
        vocab: Vocabulary,
        embed: EmbedWorker,
        embedder: Embedder | None,
        events: Events,
    ) -> None:
        self._ctx, self._cs, self._writer = tools.ctx, tools.cs, tools.writer
        self._entities, self._decisions = tools.entities, tools.decisions
        self._vocab = vocab
        self._embed = embed
        self._embedder = embedder
        self._events = events

    def run(self, run: Run) -> None:
        ns = run.namespace
        user = self._entities.entity_id(ns, "user", field="speaker")
        # no new names: only a changed fact of the user's can link "my sister" to someone
        user_changed = user is not None and any(s.split("\x1f")[1] == user for s in run.slots)
        if (
            run.since is not None
            and not user_changed
            and not self._cs.new_entity_count(ns, run.since)
        ):
            return
        rows = self._cs.entity_rows(ns)
        merges = self._cs.merges(ns)
        merged = {m["loser"] for m in merges if m["unmerged_at"] is None}
        blocked = [frozenset((m["winner"], m["loser"])) for m in merges if m["unmerged_at"]]
        ents = [r for r in rows if r["id"] not in merged]
        new = None
        if run.since is not None:
            new = {
                r["id"]
                for r in ents
                if (r["created_at"] and r["created_at"] >= run.since) or RELATIVE.match(r["key"])
            }
        pairs = candidates(
            ents,
            linked=self._linked(ns, user, ents),
            vectors=self._name_vectors(run, ents),
            new=new,
            blocked=blocked,
            exclude={user} if user else set(),
        )
        by_id = {r["id"]: r for r in ents}
        found = clusters(pairs, ents)
        if not found or run.dry_run:
            for cluster in found:
                self._merge_cluster(run, cluster, by_id, {})
            return
        # what each loser is part of, read once; copies made by earlier merges join in
        losers = {loser for c in found for loser in c.losers}
        touching: dict[str, dict[str, dict[str, Any]]] = {loser: {} for loser in losers}
        for a in self._cs.touching(ns, sorted(losers)):
            for eid in (a["slot_id"].split("\x1f")[1], a["object_id"]):
                if eid in losers:
                    touching[eid][a["id"]] = a
        for cluster in found:
            run.checkpoint("merge")
            self._merge_cluster(run, cluster, by_id, touching)

    def _linked(self, ns: str, user: str | None, ents: list[dict[str, Any]]) -> dict[str, str]:
        """ "my sister" -> the one entity the user's believed sibling facts name."""
        relative = [(e["id"], m.group(1)) for e in ents if (m := RELATIVE.match(e["key"]))]
        if user is None or not relative:
            return {}
        held: dict[str, set[str]] = {}
        for f in self._cs.relation_facts(ns, user):
            held.setdefault(f["predicate"], set()).add(f["object_id"])
        out = {}
        for eid, word in relative:
            pred = self._vocab.find(ns, word)
            objects = held.get(pred.name, set()) if pred else set()
            if len(objects) == 1:
                out[eid] = next(iter(objects))
        return out

    def _name_vectors(self, run: Run, ents: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The stored name vectors of the distinctive names; missing ones embedded now."""
        things = [e for e in ents if comparable(e)]
        if self._embedder is None or len(things) < 2:
            return None
        ids, matrix = self._embed.es.names_of(run.namespace)
        row = {e: i for i, e in enumerate(ids)}
        out = {e["id"]: matrix[row[e["id"]]] for e in things if e["id"] in row}
        missing = [e for e in things if e["id"] not in row]
        if len(missing) > EMBED_MAX:
            _log.warning(
                "merge: %d entity names have no stored vector and were not compared by"
                " meaning; run `palimpsest reindex` to embed them",
                len(missing) - EMBED_MAX,
            )
            missing = missing[:EMBED_MAX]
        if missing:
            vecs = self._embedder.embed([e["name"] for e in missing])
            out.update((e["id"], vecs[i]) for i, e in enumerate(missing))
            if not run.dry_run:
                with self._ctx.store.write(run.namespace):
                    self._embed.es.create_names(
                        [e["id"] for e in missing], [run.namespace] * len(missing), vecs
                    )
        return out

    def _merge_cluster(
        self,
        run: Run,
        cluster: Cluster,
        by_id: dict[str, Any],
        touching: dict[str, dict[str, dict[str, Any]]],
    ) -> None:
        ns, store = run.namespace, self._ctx.store
        winner = by_id[cluster.winner]
        why = "; ".join(cluster.reasons)
        for loser_id in cluster.losers:
            loser = by_id[loser_id]
            merge_id = _new_id("mg")
            reason = f"{loser['name']!r} merged into {winner['name']!r} ({merge_id}): {why}"
            change = run.add("merge", "merged", [merge_id, winner["id"], loser_id], reason)
            if run.dry_run:
                continue
            try:
                with store.write(ns):
                    moved = self._move(
                        ns,
                        {loser_id: winner["id"]},
                        touching,
                        f"merged into {winner['name']} ({merge_id})",
                    )
                    keys = [k.split("\x1f", 1)[1] for k in self._cs.keys_of(loser_id)]
                    store.names.add_entity_keys((ns, key, winner["id"]) for key in keys)
                    row = store.names.entity(winner["id"]) or winner
                    aliases = sorted(set(row["aliases"] or []) | set(keys))
                    self._cs.set_aliases(winner["id"], aliases)
                    self._cs.create_merge(
                        {
                            "id": merge_id,
                            "namespace": ns,
                            "winner": winner["id"],
                            "loser": loser_id,
                            "keys": keys,
                            "moved": [f"{old}>{new}" for old, new in moved],
                            "reason": reason[:2000],
                            "merged_at": self._ctx.tick(),
                        }
                    )
                    for _, new_id in moved:
                        self._decisions.note(ns, new_id, "merge", reason)
            finally:
                # names now point elsewhere (or, rolled back, do not): drop cached lookups
                self._events.names_changed()
                self._events.consolidated()
            self._embed.flush()  # the statements of the moved claims, now under the winner
            change.targets.extend(new for _, new in moved)
            run.slots |= self._cs_slots([new for _, new in moved])

    def _cs_slots(self, ids: list[str]) -> set[str]:
        return {a["slot_id"] for a in (self._ctx.store.slots.assertion(i) for i in ids) if a}

    def _move(
        self,
        ns: str,
        mapping: dict[str, str],
        touching: dict[str, dict[str, dict[str, Any]]],
        reason: str,
    ) -> list[tuple[str, str]]:
        """Assert every standing assertion touching a mapped entity again with the
        entity replaced; retract the originals. (old id, new id) pairs.

        `touching` (entity id -> standing assertions) was read before the step;
        each row is checked again, and the copies made here are added to it, so
        a later merge in the same run moves them too."""
        store = self._ctx.store
        olds: dict[str, dict[str, Any]] = {}
        for src in mapping:
            for aid in touching.get(src, {}):
                row = store.slots.assertion(aid)
                if row is not None and row["retracted_at"] is None:
                    olds[aid] = row
        ordered = sorted(olds.values(), key=lambda a: (a["recorded_at"], a["seq"]))
        if not ordered:
            return []
        name_of = self._entities.name_of
        parsed = [copy_of(a, mapping, origin="merge", name_of=name_of) for a in ordered]
        written = self._writer.write_assertions(ns, parsed)
        for a in ordered:
            self._writer.retract(ns, a["id"], reason=reason)
        for f in written:
            for eid in (f.subject_id, f.object_id):
                if eid is not None and eid in touching:
                    row = store.slots.assertion(f.id)
                    if row is not None:
                        touching[eid][f.id] = row
        return [(a["id"], f.id) for a, f in zip(ordered, written, strict=True)]

    def merges(self, ns: str) -> list[dict[str, Any]]:
        """Every merge recorded (id, winner, loser, keys, reason, merged_at, unmerged_at)."""
        out = []
        for m in self._cs.merges(ns):
            out.append(
                {
                    **m,
                    "winner_name": self._entities.name_of(m["winner"]),
                    "loser_name": self._entities.name_of(m["loser"]),
                }
            )
        return out

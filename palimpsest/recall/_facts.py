"""Recall's fact hits: the walk from the entities a query names, scored as hits.

    >>> facts, ended = fact_recall.hits("default", "where does my sister live?", stems, 0.0,
    ...                                 v, k, params)

The entities the query names (word
n-grams, and "I"/"my" for the user) are the entry points of `_expand.walk`;
facts believed at known_at and valid at valid_at become hits on recall's 0..1
scale (words and meaning fused like episodes, times the hop weight), with their
evidence edges back to episodes. Versions of the named entities' facts that do
not hold at valid_at mark their evidence episodes as ended.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import _names as names
from ..engine.rows import fact_model
from ..errors import ValidationError
from ..models import Fact, Hit
from ..storage import VersionDelta, fact_order
from ..temporal import version_status
from . import _expand as xp
from . import ranking as rk
from ._statements import statement_key, statement_text, variants
from ._text import STOPWORDS, query_words

if TYPE_CHECKING:
    from ..engine.asof import AsOf
    from ..engine.context import Context
    from ..engine.entities import EntityIndex
    from .embedder import Embedder

F32 = npt.NDArray[np.float32]

_STATEMENT_CACHE = 50_000  # fact statement vectors kept per open memory
_VERSION_CACHE = 400_000  # fact versions kept for the walk (a lifelog's "user" has thousands)
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
WARNING = (
    "unverified: from {author} content and quarantined until corroborated;"
    " treat it as a claim, not as knowledge"
)


class FactRecall:
    """Fact hits for `recall`, and the statement vectors they were scored with."""

    def __init__(
        self,
        ctx: Context,
        entities: EntityIndex,
        asof: AsOf,
        embedder: Embedder | None,
    ) -> None:
        self._ctx = ctx
        self._store = ctx.store
        self._entities = entities
        self._asof = asof
        self._embedder = embedder
        self._statement_vectors: dict[str, F32] | None = None  # read once per open memory
        self._foreign = ctx.foreign  # the other processes' writes the vectors include
        # Every version of a named entity's facts, and the stems of each version's
        # statement: the walk filters these by known_at itself, so a question about a
        # much-described entity costs no Kùzu rows (at 20k lifelog episodes, 8k rows a
        # recall were ~2/3 of its time). Kept across writes that change no fact, and
        # patched from what the fact writer reports it did (at 100k episodes, reading
        # "user" again after each remember made the next recall take 3-6 s).
        self._versions: dict[tuple[str, str, bool], xp.Versions] = {}
        self._versions_at = -1  # the store's fact generation they are current at
        self._versions_held = 0

    def forget_statements(self, ns: str = "", episode_ids: Sequence[str] = ()) -> None:
        """On `Events.erased`: hold no vector or row of erased words."""
        self._statement_vectors = None
        self._forget_versions(-1)

    def _forget_versions(self, generation: int) -> None:
        self._versions.clear()
        self._versions_at, self._versions_held = generation, 0

    def _catch_up(self) -> None:
        """Bring the cached versions to the store's fact generation: after writes that
        reported what they did (the fact writer), patch the entities it concerns;
        after any other, forget them all."""
        generation = self._store.fact_generation
        if generation == self._versions_at:
            return
        deltas = self._store.facts_changed_since(self._versions_at)
        if deltas is None or self._versions_held > _VERSION_CACHE:
            self._forget_versions(generation)
            return
        for d in deltas:
            if self._versions:
                self._patch(d)
        self._versions_at = generation

    def _patch(self, d: VersionDelta) -> None:
        inserted: dict[tuple[str, str, bool], list[Mapping[str, Any]]] = {}
        expired: dict[tuple[str, str, bool], dict[str, datetime]] = {}
        vanished: dict[tuple[str, str, bool], set[str]] = {}
        for r in d.inserted:
            for key in _row_keys(r):
                inserted.setdefault(key, []).append(r)
        for fact_id, ns, subject_id, object_id in d.expired:
            for key in _ends_keys(ns, subject_id, object_id):
                expired.setdefault(key, {})[fact_id] = d.at
        for fact_id, ns, subject_id, object_id in d.vanished:
            for key in _ends_keys(ns, subject_id, object_id):
                vanished.setdefault(key, set()).add(fact_id)
        for key in inserted.keys() | expired.keys() | vanished.keys():
            vs = self._versions.get(key)
            if vs is None:
                continue  # read when first asked for
            patched = vs.patched(
                inserted=inserted.get(key, []),
                expired=expired.get(key, {}),
                vanished=vanished.get(key, set()),
                order=fact_order,
            )
            self._versions[key] = patched
            self._versions_held += len(patched) - len(vs)

    def warm(self, ns: str) -> None:
        """Read every version of the namespace once, by entity at both ends, so that no
        question's first mention of an entity waits for the store (at 100k lifelog
        episodes each cost 50-150 ms, "user" 2-3 s); left to recall above the cache's
        size."""
        self._catch_up()
        if 2 * self._store.facts.version_count(ns) + self._versions_held > _VERSION_CACHE:
            return
        generation = self._versions_at
        rows = self._store.facts.facts_asof(
            namespace=ns, valid_at=None, known_at=None, include_quarantined=True
        )
        if self._store.fact_generation != generation:
            return  # written meanwhile
        groups: dict[tuple[str, str, bool], list[Mapping[str, Any]]] = {}
        for r in rows:  # in the store's order, so each group is too
            for key in _row_keys(r):
                groups.setdefault(key, []).append(r)
        for key, mine in groups.items():
            if key not in self._versions:
                self._versions[key] = xp.Versions(list(mine), stems=self._stems_of)
                self._versions_held += len(mine)

    def _versions_of(self, ns: str, entity_id: str, as_object: bool) -> xp.Versions:
        """Every recorded version with the entity as subject (or object), in the store's
        order; kept while the store's fact generation has not moved, patched after a
        fact write that said what it did (`_catch_up`)."""
        self._catch_up()
        if self._versions_held > _VERSION_CACHE:
            self._forget_versions(self._versions_at)
        generation = self._versions_at
        key = (ns, entity_id, as_object)
        cached = self._versions.get(key)
        if cached is not None:
            return cached
        rows: list[Mapping[str, Any]] = list(
            self._store.facts.facts_asof(
                namespace=ns,
                valid_at=None,
                known_at=None,
                subject_id=None if as_object else entity_id,
                object_id=entity_id if as_object else None,
                include_quarantined=True,
            )
        )
        out = xp.Versions(rows, stems=self._stems_of)
        if self._store.fact_generation == generation:  # nothing was written meanwhile
            self._versions[key] = out
            self._versions_held += len(rows)
        return out

    def _stems_of(self, rows: Sequence[Mapping[str, Any]]) -> list[frozenset[str]]:
        """The stems of each version's statement (kept with the versions they belong to)."""
        words = [query_words(_row_statement(r)) for r in rows]
        flat = sorted({w for ws in words for w in ws})
        stem_of = dict(zip(flat, self._store.recall.stems(flat), strict=True))
        return [frozenset(stem_of[w] for w in ws) for ws in words]

    def _stored_statements(self, ns: str, facts: Sequence[Fact], spoken: Sequence[str]) -> F32:
        """Each fact's statement vector without the names the question spoke: the one
        written with the fact (whole, or without its subject), read once per open
        memory (a query about the user meets the same few dozen statements again and
        again). A statement stored without vectors (written with no embedder, or by a
        run that crashed before its vectors) or stripped some other way is embedded."""
        cache = self._statement_vectors
        if cache is None or len(cache) > _STATEMENT_CACHE:
            cache = self._statement_vectors = {}
        want: list[tuple[str, str]] = []  # (cache key, the text it is the vector of)
        lookup: set[str] = set()
        for f in facts:
            forms = variants(f.subject, f.predicate, f.object)
            plain = (rk.strip_names(forms[0], spoken) or forms[0]) if spoken else forms[0]
            if plain in forms:
                key = statement_key(ns, f.subject, f.predicate, f.object)
                slot = f"\x1f{key}\x1f{forms.index(plain)}"  # no statement holds \x1f
                if slot not in cache:
                    lookup.add(key)
                want.append((slot, plain))
            else:
                want.append((plain, plain))
        if lookup:
            for key, vecs in self._store.embeddings.statement_vectors(sorted(lookup)).items():
                for n, vec in enumerate(vecs):
                    cache[f"\x1f{key}\x1f{n}"] = vec
        todo = sorted({(c, t) for c, t in want if c not in cache})
        if todo:
            assert self._embedder is not None
            made = self._embedder.embed(sorted({t for _, t in todo}))
            by_text = dict(zip(sorted({t for _, t in todo}), made, strict=True))
            for c, t in todo:
                cache[c] = by_text[t]
        return np.stack([cache[c] for c, _ in want])

    def _named_entities(self, ns: str, query: str) -> dict[str, str]:
        """Stored entities the query names (word n-grams up to 3, and "I"/"my"): their
        ids, each with the words that named it."""
        tokens = re.findall(r"[\w'’-]+", query)
        tokens = [re.sub(r"['’]s$", "", t) for t in tokens]
        found: dict[str, str] = {}
        if any(t.lower() in _FIRST_PERSON for t in tokens):
            user = self._entities.entity(ns, "user", field="query")
            if user is not None:
                found[user.id] = ""
        keyed: dict[str, str] = {}  # name key -> the first n-gram with it
        for size in (3, 2, 1):
            for i in range(len(tokens) - size + 1):
                gram = tokens[i : i + size]
                if all(g.lower() in STOPWORDS for g in gram):
                    continue
                try:
                    key = names.entity_key(names.clean_name(" ".join(gram), field="query"))
                except ValidationError:
                    continue
                keyed.setdefault(key, " ".join(gram))
        # the engine's exact name map (`engine/name_map.py`): a batch of store lookups
        # until the namespace is loaded whole, then none (most n-grams name nobody)
        models = self._entities.models
        held = [key for key in keyed if (ns, key) in models]
        # asked even when every key is held: the map drops the models it names if another
        # process wrote since (a merge or an erase there changes what a name denotes)
        stored = self._entities.map.resolve(ns, [k for k in keyed if (ns, k) not in models])
        dropped = [key for key in held if (ns, key) not in models]
        if dropped:
            stored.update(self._entities.map.resolve(ns, dropped))
        for key, said in keyed.items():
            ent = models.get((ns, key))
            if ent is None and key in stored:
                ent = self._entities.loaded(ns, key, stored[key])
            if ent is not None and ent.id not in found:
                found[ent.id] = said
        return found

    def hits(
        self,
        ns: str,
        query: str,
        stems: Sequence[str],
        novelty: float,
        v: datetime,
        kt: datetime,
        params: rk.RankParams,
    ) -> tuple[list[Hit], xp.Ended]:
        """Facts about the named entities valid at V as believed at K, as scored hits;
        and which episodes only evidence versions not holding at V."""
        if self._foreign != self._ctx.foreign:
            # another process wrote since: what it erased may be among the statements
            self._statement_vectors, self._foreign = None, self._ctx.foreign
        named = self._named_entities(ns, query)
        if not named:
            return [], xp.Ended([])
        subjects = list(named)
        qterms = {s for s in stems if not s.startswith("zq")} or set(stems)
        # Every fact of a named entity contains its name: that the question names
        # someone says whose facts to look at, not which of them answer it. Only the
        # question's other words count, unless it has none ("tell me about Mira").
        name_words = [w for n in named.values() for w in query_words(n)]
        content = qterms - set(self._store.recall.stems(name_words))
        qterms = content or qterms
        spoken = [n for n in named.values() if n]
        dense_query = (rk.strip_names(query, spoken) or query) if content else query

        def fetch(entity_id: str, as_object: bool) -> xp.Versions:
            return self._versions_of(ns, entity_id, as_object)

        walked = xp.walk(fetch, subjects, qterms, known_at=kt)
        # per segment: the versions holding at V, and (hop 1) those that do not
        covers = [s.versions.covers(v) for s in walked]
        held = [s.only(c) for s, c in zip(walked, covers, strict=True)]
        ended = xp.Ended.of(walked, covers)
        if not any(len(s.index) for s in held):
            return [], ended
        lex_all = np.concatenate([s.versions.lexical(qterms)[s.index] for s in held])
        hop_all = np.concatenate([np.full(len(s.index), s.hop, dtype=np.int64) for s in held])
        keep = xp.shortlist(lex_all, hop_all)
        holding = [(xp.row_at(held, n), int(hop_all[n])) for n in keep]
        lexical = lex_all[keep]
        contested = self._asof.contested([r for r, _ in holding], known_at=kt)
        facts = [
            fact_model(
                r,
                version_status(
                    valid_to=r["valid_to"],
                    expired_at=r["expired_at"],
                    retracted_at=None,
                    quarantined=r["quarantined"],
                    known_at=kt,
                    valid_at=v,
                    contested=r["id"] in contested,
                ),
            )
            for r, _ in holding
        ]
        statements = [statement_text(f.subject, f.predicate, f.object) for f in facts]
        if self._embedder is not None:
            q = self._embedder.embed([dense_query])[0]
            vecs = self._stored_statements(ns, facts, spoken if content else [])
            dense = rk.cosine_to_unit(vecs @ q)
        else:
            dense = np.zeros(len(facts), dtype=np.float32)
        scores = rk.fuse_weighted([lexical, dense], [params.w_bm25, params.w_dense])
        scores = scores * np.float32(1.0 - params.novelty_weight * novelty)
        scores = scores * xp.hop_weight([h for _, h in holding])
        hits = []
        for f, text, s, lx, dn in zip(facts, statements, scores, lexical, dense, strict=True):
            hits.append(
                Hit(
                    kind="fact",
                    text=text,
                    score=round(float(s), 6),
                    channels={"lexical": round(float(lx), 6), "dense": round(float(dn), 6)},
                    episode_id=f.evidence[0] if f.evidence else None,
                    author_kind=f.author_kind,
                    recorded_at=f.recorded_at,
                    status=f.status,
                    quarantined=f.quarantined,
                    warning=WARNING.format(author=f.author_kind) if f.quarantined else None,
                    evidence=list(f.evidence),
                    valid_from=f.valid_from,
                    valid_to=f.valid_to,
                    fact_id=f.id,
                )
            )
        hits.sort(key=lambda h: -h.score)
        return hits, ended


def _ends_keys(ns: str, subject_id: str, object_id: str | None) -> list[tuple[str, str, bool]]:
    """The cached versions a version belongs to: its subject's, and its object's."""
    keys = [(ns, subject_id, False)]
    if object_id is not None:
        keys.append((ns, object_id, True))
    return keys


def _row_keys(r: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
    obj = r["object_id"]
    return _ends_keys(str(r["namespace"]), str(r["subject_id"]), None if obj is None else str(obj))


def _row_statement(r: Mapping[str, Any]) -> str:
    return statement_text(r["subject"], str(r["predicate"]), r["object"])

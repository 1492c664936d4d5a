"""The verbs of `Memory` the CLI uses, answered over HTTP by the server holding the directory.

    >>> with RemoteMemory(read_address(Path("palimpsest-data")), path="palimpsest-data") as mem:
    ...     mem.assert_fact("user", "lives_in", "Perth")
    ...     mem.facts("user", "lives_in", valid_at="2024-09-01T00:00:00Z")

While `palimpsest serve` holds a memory, Kùzu keeps every other process out, so
the CLI's reads (facts, history, entity, snapshot, changes, recall, predicates,
stats) and writes (assert, end, retract, erase, remember, define-predicate) go
through the server instead, with its tokens and namespaces, and print the same
models: nobody is told to stop the server to add a fact. Anything else (a
consolidation, an import) raises `MemoryLocked` naming the server. Engine errors
come back with their own codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from ..engine.rows import UNSET
from ..errors import MemoryLocked, error_class
from ..models import (
    Changes,
    EntityProfile,
    Episode,
    Fact,
    Hit,
    Predicate,
    Snapshot,
    Stats,
    Tombstone,
)
from .address import Address, held_message

PAGE = 1000
TIMEOUT_S = 120.0


class RemoteMemory:
    """What the CLI reads through a running server; see the module docstring."""

    def __init__(
        self,
        address: Address,
        *,
        path: str | Path,
        namespace: str = "default",
        token: str | None = None,
    ) -> None:
        self.address = address
        self.namespace = namespace
        self._path = Path(path)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=address.url, headers=headers, timeout=TIMEOUT_S)

    @property
    def path(self) -> Path:
        return self._path

    def held(self, hint: str = "") -> MemoryLocked:
        msg = held_message(self._path, self.address) + hint
        return MemoryLocked(msg, path=str(self._path), url=self.address.url, pid=self.address.pid)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        # any verb but the reads below: refuse, naming the server
        if name.startswith("_"):
            raise AttributeError(name)
        raise self.held()

    # --- transport ----------------------------------------------------------------------------
    def _get(self, url: str, **params: Any) -> Any:
        return self._send("GET", url, None, params)

    def _send(
        self,
        method: str,
        url: str,
        body: dict[str, Any] | None,
        params: dict[str, Any],
        key: str | None = None,
    ) -> Any:
        query = {k: v for k, v in params.items() if v is not None}
        query["namespace"] = self.namespace
        headers = {} if key is None else {"Idempotency-Key": key}
        try:
            r = self._http.request(method, url, params=query, json=body, headers=headers)
        except httpx.HTTPError:
            raise self.held(" (it did not answer)") from None
        if r.status_code in (401, 403):
            raise self.held(" (it wants a token with access: set PALIMPSEST_TOKEN)")
        if r.status_code >= 400:
            try:
                body = r.json()
                code, detail = str(body["code"]), str(body["detail"])
            except (ValueError, KeyError, TypeError):
                raise self.held(f" (it answered HTTP {r.status_code})") from None
            err = error_class(code)(detail)
            err.code = code  # a code this client does not know keeps its name
            raise err
        return r.json()

    # --- the writes -------------------------------------------------------------------------------
    def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        valid_from: Any = UNSET,
        valid_to: str | None = None,
        confidence: float = 1.0,
        author_kind: str = "user",
        evidence: Sequence[str] = (),
        occurred_at: str | None = None,
        idempotency_key: str | None = None,
    ) -> Fact:
        body: dict[str, Any] = {
            "subject": subject,
            "predicate": predicate,
            "object": object,
            "valid_to": valid_to,
            "confidence": confidence,
            "author_kind": author_kind,
            "evidence": list(evidence),
            "occurred_at": occurred_at,
        }
        if valid_from is not UNSET:  # left out: the statement's time; None: since always
            body["valid_from"] = valid_from
        return Fact.model_validate(self._send("POST", "/v1/facts", body, {}, idempotency_key))

    def end_fact(
        self,
        subject: str,
        predicate: str,
        object: str | None = None,
        *,
        at: Any = UNSET,
        idempotency_key: str | None = None,
    ) -> Fact:
        body = {"subject": subject, "predicate": predicate, "object": object}
        if at is not UNSET:
            body["at"] = at
        return Fact.model_validate(self._send("POST", "/v1/facts:end", body, {}, idempotency_key))

    def retract(
        self, fact_id: str, *, reason: str | None = None, idempotency_key: str | None = None
    ) -> Fact:
        url = f"/v1/facts/{quote(fact_id, safe='')}:retract"
        return Fact.model_validate(self._send("POST", url, {"reason": reason}, {}, idempotency_key))

    def erase(
        self, item_id: str, *, reason: str | None = None, idempotency_key: str | None = None
    ) -> list[Tombstone]:
        url = "/v1/items/" + quote(item_id, safe="")
        rows = self._send("DELETE", url, None, {"reason": reason}, idempotency_key)
        return [Tombstone.model_validate(t) for t in rows]

    def remember(self, text: str, idempotency_key: str | None = None, **fields: Any) -> Episode:
        body = {"text": text, **{k: v for k, v in fields.items() if v is not None}}
        sent = self._send("POST", "/v1/episodes", body, {}, idempotency_key)
        return Episode.model_validate(sent)

    def define_predicate(
        self,
        name: str,
        cardinality: str = "many",
        *,
        aliases: Sequence[str] = (),
        inverse: str | None = None,
        object_kind: str = "entity",
        idempotency_key: str | None = None,
    ) -> Predicate:
        body = {
            "cardinality": cardinality,
            "aliases": list(aliases),
            "inverse": inverse,
            "object_kind": object_kind,
        }
        url = "/v1/predicates/" + quote(name, safe="")
        return Predicate.model_validate(self._send("PUT", url, body, {}, idempotency_key))

    # --- the reads --------------------------------------------------------------------------------
    def facts(
        self,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        *,
        valid_at: str | None = None,
        known_at: str | None = None,
        include_quarantined: bool = False,
        limit: int | None = None,
    ) -> list[Fact]:
        out: list[Fact] = []
        offset: int | None = 0
        while offset is not None and (limit is None or len(out) < limit):
            page = self._get(
                "/v1/facts",
                subject=subject,
                predicate=predicate,
                object=object,
                valid_at=valid_at,
                known_at=known_at,
                include_quarantined=include_quarantined,
                limit=PAGE if limit is None else min(PAGE, limit - len(out)),
                offset=offset,
            )
            out += [Fact.model_validate(f) for f in page["items"]]
            offset = page["next_offset"]
        return out

    def history(self, subject: str, predicate: str | None = None) -> list[Fact]:
        rows = self._get("/v1/history", subject=subject, predicate=predicate)
        return [Fact.model_validate(f) for f in rows]

    def entity(
        self, name: str, *, valid_at: str | None = None, known_at: str | None = None
    ) -> EntityProfile:
        body = self._get(
            "/v1/entities/" + quote(name, safe=""), valid_at=valid_at, known_at=known_at
        )
        return EntityProfile.model_validate(body)

    def snapshot(
        self,
        *,
        valid_at: str | None = None,
        known_at: str | None = None,
        entities: list[str] | None = None,
    ) -> Snapshot:
        body = self._get("/v1/snapshot", valid_at=valid_at, known_at=known_at, entity=entities)
        return Snapshot.model_validate(body)

    def changes(
        self, since: str, until: str | None = None, *, known_at: str | None = None
    ) -> Changes:
        body = self._get("/v1/changes", since=since, until=until, known_at=known_at)
        return Changes.model_validate(body)

    def recall(
        self,
        query: str,
        k: int = 5,
        *,
        valid_at: str | None = None,
        known_at: str | None = None,
        min_score: float | None = None,
        diversity: float | None = None,
    ) -> list[Hit]:
        rows = self._get(
            "/v1/recall",
            query=query,
            k=k,
            valid_at=valid_at,
            known_at=known_at,
            min_score=min_score,
            diversity=diversity,
        )
        return [Hit.model_validate(h) for h in rows]

    def predicates(self) -> list[Predicate]:
        return [Predicate.model_validate(p) for p in self._get("/v1/predicates")]

    def stats(self) -> Stats:
        return Stats.model_validate(self._get("/v1/stats"))

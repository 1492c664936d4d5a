"""The read verbs of `Memory`, answered over HTTP by the server that holds the directory.

    >>> with RemoteMemory(read_address(Path("palimpsest-data")), path="palimpsest-data") as mem:
    ...     mem.facts("user", "lives_in", valid_at="2024-09-01T00:00:00Z")

While `palimpsest serve` holds a memory, Kùzu keeps every other process out, so
the CLI's read commands (facts, history, entity, snapshot, changes, recall,
predicates, stats) go through the server instead and print the same models.
Anything else (a write, a consolidation) raises `MemoryLocked` naming the
server: writes through a side door would bypass the server's tokens and
namespaces. Engine errors come back with their own codes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from ..errors import MemoryLocked, PalimpsestError
from ..models import Changes, EntityProfile, Fact, Hit, Predicate, Snapshot, Stats
from .address import Address, held_message

PAGE = 1000
TIMEOUT_S = 120.0


def _error_class(code: str) -> type[PalimpsestError]:
    todo: list[type[PalimpsestError]] = [PalimpsestError]
    while todo:
        cls = todo.pop()
        if cls.code == code:
            return cls
        todo.extend(cls.__subclasses__())
    return PalimpsestError


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
        query = {k: v for k, v in params.items() if v is not None}
        query["namespace"] = self.namespace
        try:
            r = self._http.get(url, params=query)
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
            err = _error_class(code)(detail)
            err.code = code  # a code this client does not know keeps its name
            raise err
        return r.json()

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

"""One exception tree with stable error codes.

    >>> try:
    ...     raise InvalidWindow("valid_to must be after valid_from")
    ... except PalimpsestError as e:
    ...     e.code
    'invalid_window'

Codes are a contract: the HTTP layer maps them to statuses in one place, and
callers may switch on them. Add codes; never rename one.
"""

from __future__ import annotations

from typing import Any


class PalimpsestError(Exception):
    """Root of every error the engine raises on purpose."""

    code = "palimpsest_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class ValidationError(PalimpsestError):
    """Input rejected at the boundary; nothing was stored."""

    code = "invalid_input"


class NaiveDatetime(ValidationError):
    code = "naive_datetime"


class InvalidTime(ValidationError):
    code = "invalid_time"


class InvalidWindow(ValidationError):
    code = "invalid_window"


class InvalidName(ValidationError):
    code = "invalid_name"


class TooLarge(ValidationError):
    code = "too_large"


class UnknownPredicate(ValidationError):
    code = "unknown_predicate"


class IdempotencyKeyReused(ValidationError):
    """An idempotency key came back with a different request than the one it first
    keyed (another verb, or other arguments): nothing was done."""

    code = "idempotency_key_reused"


class NotFound(PalimpsestError):
    code = "not_found"


class Conflict(PalimpsestError):
    """The request contradicts stored state (e.g. retracting twice)."""

    code = "conflict"


class AlreadyErased(Conflict):
    code = "erased"


class NotQuarantined(Conflict):
    """Only a standing quarantined claim can be promoted or rejected by review."""

    code = "not_quarantined"


class ConsolidationTaken(Conflict):
    """A nightly run of this namespace is already done, or another process holds its
    lease (`details["state"]`: "done" or "held")."""

    code = "consolidation_taken"


class LeaseLost(Conflict):
    """This process's nightly lease ran out and another took the run over: it stopped
    before its watermark (the steps it finished stay written and are redone cleanly)."""

    code = "lease_lost"


class MemoryLocked(PalimpsestError):
    """Another process (or an open `Memory` in this one) holds the directory."""

    code = "memory_locked"


class OwnerUnavailable(PalimpsestError):
    """The owner process of a shared memory could not be reached or started; the call
    was not made."""

    code = "owner_unavailable"


class OwnerLost(PalimpsestError):
    """The owner process stopped while a call was under way: the call may or may not
    have been applied (every call it acknowledged was)."""

    code = "owner_lost"


class StoreError(PalimpsestError):
    """The storage layer failed; the write it was part of did not happen."""

    code = "store_error"


class SchemaError(StoreError):
    code = "schema_error"


class StoreUnavailable(StoreError):
    """The store cannot be reached: its database server is down, restarting, failing
    over or out of connections. Nothing of the call was written; try it again (the
    memory reconnects by itself). `details["retry_after"]`, when given, is how many
    seconds to wait first. One exception: `details["outcome"] == "unknown"`, the
    connection was lost during the commit and the server could not say what became of
    it: the write may be stored, so retry it with the same idempotency key.

        >>> StoreUnavailable("cannot reach the database", retry_after=2).to_dict()
        {'code': 'store_unavailable', 'message': 'cannot reach the database', 'retry_after': 2}
    """

    code = "store_unavailable"


class ClosedError(PalimpsestError):
    code = "closed"


class EmbedderMismatch(PalimpsestError):
    """The memory's vectors came from another embedding model than the one configured.

    Mixing two models' vectors makes cosine scores meaningless; reopen with the
    recorded model, or with `reembed=True` to recompute every vector.
    """

    code = "embedder_mismatch"


def error_class(code: str) -> type[PalimpsestError]:
    """The class of an error code (e.g. from another process); the root for unknown codes.

    >>> error_class("not_found").__name__
    'NotFound'
    """
    todo: list[type[PalimpsestError]] = [PalimpsestError]
    while todo:
        cls = todo.pop()
        if cls.code == code:
            return cls
        todo.extend(cls.__subclasses__())
    return PalimpsestError

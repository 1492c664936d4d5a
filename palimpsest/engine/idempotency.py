"""Idempotent writes: a retried write with the same key returns the first outcome.

    >>> keys = Idempotency(ctx)
    >>> fact = keys.once("default", "req-42", "assert_fact", {"subject": "user"},
    ...                  lambda: writer.assert_fact(...), Fact)
    >>> keys.once("default", "req-42", "assert_fact", {"subject": "user"}, ..., Fact)  # replay

A client that lost an acknowledgement (a timeout, a worker killed after its commit)
sends the write again with the same key, to the same worker or another. The key, a
fingerprint of the verb and its arguments, and the outcome as JSON are stored in the
write's own transaction (one commit, or none), under the store's write lock, so a
retry either finds the key and gets the first outcome back, writing nothing, or finds
no trace of the first attempt and does the write itself. The same key with another
request is refused (`IdempotencyKeyReused`), as the IETF Idempotency-Key draft asks.
Keys are per namespace and kept (they are small; a namespace's export leaves them out).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import TypeAdapter

from ..errors import IdempotencyKeyReused, ValidationError
from .context import Context

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
MAX_KEY = 255


def check_key(key: object) -> str:
    """A key as given: a non-empty string of at most 255 printable characters."""
    if not isinstance(key, str) or not key or len(key) > MAX_KEY or not key.isprintable():
        raise ValidationError(
            f"idempotency_key: 1 to {MAX_KEY} printable characters", field="idempotency_key"
        )
    return key


def fingerprint(verb: str, request: Mapping[str, Any]) -> str:
    """What makes two requests the same: the verb and its arguments, canonically."""
    text = json.dumps({"verb": verb, "request": request}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Idempotency:
    """Runs keyed writes once per (namespace, key)."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._adapters: dict[Any, TypeAdapter[Any]] = {}

    def once(
        self,
        namespace: str,
        key: str | None,
        verb: str,
        request: Mapping[str, Any],
        run: Callable[[], T],
        shape: Any,
    ) -> T:
        """`run()` unless `key` already keyed this request (its first outcome, as
        `shape`); without a key, just `run()`."""
        if key is None:
            return run()
        key = check_key(key)
        fp = fingerprint(verb, request)
        adapter = self._adapter(shape)
        ctx = self._ctx
        with ctx.lock, ctx.store.write(namespace):  # the verb's own transaction joins this one
            keys = ctx.store.keys
            found = keys.get(namespace, key)
            if found is not None:
                if found["fingerprint"] != fp:
                    raise IdempotencyKeyReused(
                        f"idempotency key {key!r} was first used for another request"
                        f" ({found['verb']}); use a new key for a new request",
                        field="idempotency_key",
                    )
                out: T = adapter.validate_json(found["outcome"])
                return out
            result = run()
            keys.put(
                {
                    "namespace": namespace,
                    "key": key,
                    "verb": verb,
                    "fingerprint": fp,
                    "outcome": adapter.dump_json(result).decode(),
                    "recorded_at": ctx.now(),
                }
            )
            return result

    def _adapter(self, shape: Any) -> TypeAdapter[Any]:
        if shape not in self._adapters:
            self._adapters[shape] = TypeAdapter(shape)
        return self._adapters[shape]


def keyed(verb: str, shape: Any) -> Callable[[F], F]:
    """A `Memory` write verb that takes `idempotency_key=` (run by `Memory._keys`).

        >>> @keyed("assert_fact", Fact)
        ... def assert_fact(self, subject, ..., namespace=None, idempotency_key=None): ...

    The request a key fingerprints is the verb's arguments as bound, defaults applied
    (an iterable of items is read once, into a list, and that list is what runs).
    """

    def wrap(method: F) -> F:
        signature = inspect.signature(method)

        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            key = kwargs.pop("idempotency_key", None)
            if key is None:
                return method(self, *args, **kwargs)
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            asked = dict(bound.arguments)
            del asked["self"]
            asked.pop("idempotency_key", None)
            for name, value in asked.items():
                if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
                    asked[name] = [dict(v) if isinstance(v, Mapping) else v for v in value]
            ns = self._ns(asked.get("namespace"))
            return self._keys.once(ns, key, verb, asked, lambda: method(self, **asked), shape)

        return run  # type: ignore[return-value]

    return wrap

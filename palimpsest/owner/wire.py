"""What goes over the owner's socket: JSON lines carrying `Memory`'s verbs generically.

    client -> owner   {"id": 1, "verb": "facts", "kwargs": {"subject": "user"},
                       "namespace": "default"}
    owner -> client   {"id": 1, "result": [{"id": "fa_...", ...}]}
                      {"id": 1, "error": {"code": "not_found", "message": "...", "details": {}}}
                      {"id": 1, "call": 0, "args": [3, 10]}     (a callback argument: progress)
                      {"id": 1, "chunk": ["...", "..."]}       (an iterator result, in parts)
                      {"bye": true}                            (closing: the request was not run)

On connecting, the owner says who it is and which verbs it serves (`hello`):
each verb's parameters and its return annotation, a string such as
"list[Fact]" naming `palimpsest.models` types. The client checks a call's
arguments against the parameters and turns the JSON result back into the
annotated type with pydantic, so a verb added to `Memory` needs no work here.
Errors keep their `PalimpsestError` code (`errors.error_class`).

Arguments that are not JSON travel tagged: a datetime as {"$dt": iso}, the
`UNSET` default as {"$unset": 1}, a callable as {"$call": n} (the owner calls it
back), a text file to write as {"$write": n}; other iterables go as lists.
Imports pydantic and the models only: never Kùzu or a model.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, TypeAdapter

from ..engine.rows import UNSET
from ..errors import PalimpsestError, error_class

MAX_LINE = 1 << 30  # one message at most (an import's lines travel in one)
CHUNK = 500  # items of an iterator result a message


def send(out: IO[bytes], message: Mapping[str, Any]) -> None:
    out.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    out.flush()


def receive(src: IO[bytes]) -> dict[str, Any] | None:
    """The next message; None at the end of the stream (or a cut-off last line)."""
    line = src.readline(MAX_LINE)
    if not line.endswith(b"\n"):
        return None
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message is a JSON object")
    return message


# --- arguments ----------------------------------------------------------------------------
def encode(value: Any, calls: list[Callable[..., Any]], writers: list[Any] | None) -> Any:
    """An argument as JSON; callables are kept in `calls`, and a file to write (where
    `writers` is given: a parameter annotated `IO[...]`) in `writers`."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if value is UNSET:
        return {"$unset": 1}
    if isinstance(value, datetime):
        return {"$dt": value.isoformat()}
    if isinstance(value, Path):
        return str(value.absolute())
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): encode(v, calls, writers) for k, v in value.items()}
    if writers is not None and callable(getattr(value, "write", None)):
        writers.append(value)
        return {"$write": len(writers) - 1}
    if callable(value):
        calls.append(value)
        return {"$call": len(calls) - 1}
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, Iterable):  # lists, tuples, generators, open files of lines
        return [encode(v, calls, writers) for v in value]
    raise TypeError(f"cannot send a {type(value).__name__} to the owner")


def decode(value: Any, call: Callable[[int, str], Callable[..., Any]]) -> Any:
    """An argument as the verb takes it; `call(n, kind)` stands in for callback n."""
    if isinstance(value, list):
        return [decode(v, call) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((tag, inner),) = value.items()
        if tag == "$unset":
            return UNSET
        if tag == "$dt":
            return datetime.fromisoformat(inner)
        if tag == "$call":
            return call(int(inner), "call")
        if tag == "$write":
            return _Writer(call(int(inner), "write"))
    return {k: decode(v, call) for k, v in value.items()}


class _Writer:
    """A text file of the client, written through callbacks (`export(sys.stdout)`)."""

    def __init__(self, write: Callable[..., Any]) -> None:
        self.write = write


# --- results ------------------------------------------------------------------------------
def dump(value: Any) -> Any:
    """A verb's result (models, lists, dicts, times) as JSON data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): dump(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [dump(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    return value


def streams(annotation: str) -> bool:
    """Is a verb with this return annotation answered in chunks (an iterator)?"""
    return annotation.startswith(("Iterator[", "Iterable[", "Generator["))


_ADAPTERS: dict[str, TypeAdapter[Any] | None] = {}


def load(data: Any, annotation: str) -> Any:
    """JSON data back into the annotated type (unknown annotations: the data as is)."""
    if annotation not in _ADAPTERS:
        from .. import models

        scope = {**vars(typing), **vars(models), "datetime": datetime, "Path": Path}
        scope.update(Iterator=list, dict=dict, list=list, tuple=tuple, str=str, int=int)
        scope.update(float=float, bool=bool, __builtins__={})
        try:  # the owner is this user's own process (files.peer_uid): its annotations
            _ADAPTERS[annotation] = TypeAdapter(eval(annotation, scope))
        except Exception:  # a type this client does not know: plain JSON
            _ADAPTERS[annotation] = None
    adapter = _ADAPTERS[annotation]
    return data if adapter is None else adapter.validate_python(data)


# --- errors -------------------------------------------------------------------------------
def error(e: BaseException) -> dict[str, Any]:
    if isinstance(e, PalimpsestError):
        details = json.loads(json.dumps(e.details, default=str))
        return {"code": e.code, "message": e.message, "details": details}
    return {"code": "owner_error", "message": f"{type(e).__name__}: {e}", "details": {}}


def raised(data: Mapping[str, Any]) -> PalimpsestError:
    """The error an owner reported, as the class of its code."""
    code = str(data.get("code", "palimpsest_error"))
    details = data.get("details") or {}
    err = error_class(code)(str(data.get("message", "")), **details)
    err.code = code  # a code this client does not know keeps its name
    return err


def chunks(items: Iterator[Any]) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(dump(item))
        if len(batch) >= CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch

"""`Memory`'s public API, frozen before the collaborator refactor (issue 15).

    $ .venv/bin/python -m tests.test_memory_api --write   # only to record a deliberate change

Every public name of `Memory` (methods, properties, classmethods, the public
instance attributes of an open memory, and the dunders a caller uses), with its
`inspect.signature` (parameter kinds, defaults as `repr`, annotations as the
strings they are written as) and its docstring; the package's exports; and the
stable error codes of `palimpsest.errors`. The committed file was written from
the code as it stood before the refactor: a difference here is an API change.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import palimpsest
from palimpsest import Memory, errors

SNAPSHOT = Path(__file__).resolve().parent / "data" / "memory_api.json"
_DUNDERS = ("__init__", "__enter__", "__exit__")
_EMPTY = inspect.Parameter.empty


def _annotation(value: Any) -> str | None:
    if value is _EMPTY:
        return None
    return value if isinstance(value, str) else repr(value)


def _signature(fn: Any) -> dict[str, Any]:
    sig = inspect.signature(fn)
    return {
        "parameters": [
            {
                "name": p.name,
                "kind": p.kind.name,
                "default": None if p.default is _EMPTY else repr(p.default),
                "has_default": p.default is not _EMPTY,
                "annotation": _annotation(p.annotation),
            }
            for p in sig.parameters.values()
        ],
        "returns": _annotation(sig.return_annotation),
        "text": str(sig),
    }


def _member(raw: Any) -> dict[str, Any]:
    if isinstance(raw, classmethod):
        return {"kind": "classmethod", **_signature(raw.__func__), "doc": raw.__func__.__doc__}
    if isinstance(raw, staticmethod):
        return {"kind": "staticmethod", **_signature(raw.__func__), "doc": raw.__func__.__doc__}
    if isinstance(raw, property):
        # a property and a plain instance attribute read and write alike: both are data
        return {"kind": "data", "doc": raw.__doc__}
    if inspect.isfunction(raw):
        return {"kind": "method", **_signature(raw), "doc": raw.__doc__}
    return {"kind": "data", "doc": None}


def describe(tmp: Path) -> dict[str, Any]:
    """The API as the code states it now."""
    names = [n for n in dir(Memory) if not n.startswith("_")] + list(_DUNDERS)
    memory = {n: _member(inspect.getattr_static(Memory, n)) for n in sorted(names)}
    with Memory.open(tmp / "api", embedder=None, extractor=None) as mem:
        for n in sorted(vars(mem)):
            if not n.startswith("_"):
                memory.setdefault(n, {"kind": "data", "doc": None})
    codes = {
        name: {"code": cls.code, "bases": [b.__name__ for b in cls.__bases__], "doc": cls.__doc__}
        for name, cls in sorted(vars(errors).items())
        if isinstance(cls, type) and issubclass(cls, errors.PalimpsestError)
    }
    return {
        "memory": memory,
        "memory_doc": Memory.__doc__,
        "package_all": sorted(palimpsest.__all__),
        "errors": codes,
    }


def test_memory_public_api_is_unchanged(tmp_path: Path) -> None:
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    got = json.loads(json.dumps(describe(tmp_path)))
    assert sorted(got["memory"]) == sorted(want["memory"]), "public names of Memory changed"
    for name, spec in want["memory"].items():
        assert got["memory"][name] == spec, f"Memory.{name} changed"
    assert got == want


def test_the_snapshot_covers_every_verb() -> None:
    """The file is the API, not a stub: the verbs a caller knows are in it, with defaults."""
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["memory"]
    for verb in ("open", "assert_fact", "remember", "recall", "consolidate", "erase", "restore"):
        assert want[verb]["kind"] in ("method", "classmethod") and want[verb]["doc"]
    params = {p["name"]: p for p in want["assert_fact"]["parameters"]}
    assert params["valid_from"]["default"] == "UNSET" and params["confidence"]["default"] == "1.0"
    assert want["namespace"]["kind"] == "data" and len(want) > 35


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        SNAPSHOT.write_text(json.dumps(describe(Path(d)), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")

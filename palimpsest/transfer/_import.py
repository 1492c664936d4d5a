"""Export records -> validated rows, the whole file checked before anything is written.

    >>> data = parse_export(open("memory.jsonl"))
    >>> len(data.rows["assertion"])

Every error names its line; a file that stops before its `end` record is
refused as truncated. References are checked too (each assertion's subject,
object and slot, each key's entity), because a restore writes raw rows that
nothing downstream validates again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._time import to_utc
from ..errors import PalimpsestError, ValidationError
from ._export import FIELDS
from ._format import AUX_TYPES, FORMAT, KINDS, VERSION, json_lines

_AUTHOR_KINDS = ("user", "agent", "tool", "document", "third_party")
_ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("predicate", "cardinality"): ("one", "many"),
    ("predicate", "object_kind"): ("entity", "value"),
    ("episode", "author_kind"): _AUTHOR_KINDS,
    ("assertion", "author_kind"): _AUTHOR_KINDS,
    ("assertion", "op"): ("assert", "end"),
    ("tombstone", "kind"): ("fact", "episode"),
}
# parts of composite ids joined by \x1f: a separator inside would forge another id
_ID_PARTS = {
    "entity": ("id", "key"),
    "entity_key": ("key", "entity_id"),
    "slot": ("subject_id", "predicate"),
    "assertion": ("subject_id", "predicate"),
    "predicate": ("name",),
}


@dataclass
class ExportData:
    header: dict[str, Any]
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {k: [] for k in KINDS})


def _fail(line: int, message: str) -> ValidationError:
    return ValidationError(f"line {line}: {message}", line=line)


def _value(kind: str, name: str, typ: str, v: Any, line: int) -> Any:
    optional = typ.endswith("?")
    if v is None:
        if optional:
            return None
        raise _fail(line, f"{kind}.{name} is required")
    base = typ.rstrip("?")
    if base == "s":
        ok = isinstance(v, str)
    elif base == "t":
        if not isinstance(v, str):
            raise _fail(line, f"{kind}.{name}: expected an ISO-8601 time")
        try:
            return to_utc(v, name=f"{kind}.{name}")
        except PalimpsestError as e:
            raise _fail(line, e.message) from None
    elif base == "f":
        ok = isinstance(v, int | float) and not isinstance(v, bool) and 0.0 <= v <= 1.0
        if ok:
            return float(v)
    elif base == "i":
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif base == "b":
        ok = isinstance(v, bool)
    else:  # "l"
        ok = isinstance(v, list) and all(isinstance(x, str) for x in v)
    if not ok:
        expected = {"s": "a string", "f": "a number in [0, 1]", "i": "an integer"}
        expected |= {"b": "true or false", "l": "a list of strings"}
        raise _fail(line, f"{kind}.{name}: expected {expected[base]}")
    return v


def _row(kind: str, obj: dict[str, Any], line: int) -> dict[str, Any]:
    fields = FIELDS[kind]
    extra = set(obj) - set(fields) - {"record"}
    if extra:
        raise _fail(line, f"{kind}: unknown fields {sorted(extra)}")
    row = {n: _value(kind, n, t, obj.get(n), line) for n, t in fields.items()}
    for (k, n), allowed in _ENUMS.items():
        if k == kind and row[n] not in allowed:
            raise _fail(line, f"{kind}.{n}: one of {', '.join(allowed)}")
    for n in _ID_PARTS.get(kind, ()):
        if row[n] is not None and ("\x1f" in row[n] or not row[n]):
            raise _fail(line, f"{kind}.{n}: empty or contains a control character")
    return row


def _header(obj: Any, line: int) -> dict[str, Any]:
    if not isinstance(obj, dict) or obj.get("record") != "header" or obj.get("format") != FORMAT:
        raise _fail(line, f"not a {FORMAT} file (its first record must be the header)")
    version = obj.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > VERSION:
        raise _fail(line, f"export format version {version!r}: this Palimpsest reads {VERSION}")
    tables = obj.get("tables", {})
    if not isinstance(tables, dict) or not all(
        isinstance(cols, dict) and all(t in AUX_TYPES for t in cols.values())
        for cols in tables.values()
    ):
        raise _fail(line, f"header.tables: {{table: {{column: type}}}} with types {AUX_TYPES}")
    return obj


def _aux(obj: dict[str, Any], tables: dict[str, dict[str, str]], line: int) -> dict[str, Any]:
    """A consolidation-table row, decoded by the column types the header declares."""
    extra = set(obj) - {"record", "table", "row"}
    if extra:
        raise _fail(line, f"aux: unknown fields {sorted(extra)}")
    table, row = obj.get("table"), obj.get("row")
    if not isinstance(table, str) or table not in tables:
        raise _fail(line, f"aux: table {table!r} is not declared in the header")
    if not isinstance(row, dict):
        raise _fail(line, "aux.row: expected an object")
    cols = tables[table]
    unknown = set(row) - set(cols)
    if unknown:
        raise _fail(line, f"aux: {table} has no columns {sorted(unknown)}")
    codes = {"STRING": "s?", "TIMESTAMP": "t?", "BOOL": "b?", "STRING[]": "l?"}
    out: dict[str, Any] = {}
    for c, t in cols.items():
        v = row.get(c)
        if t == "DOUBLE" and v is not None:
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise _fail(line, f"{table}.{c}: expected a number")
            out[c] = float(v)
        elif t == "INT64" and v is not None:
            if isinstance(v, bool) or not isinstance(v, int):
                raise _fail(line, f"{table}.{c}: expected an integer")
            out[c] = v
        else:
            out[c] = _value(table, c, codes.get(t, "s?"), v, line)
    if "id" in cols and not out.get("id"):
        raise _fail(line, f"{table}.id is required")
    return {"table": table, "row": out}


def parse_export(lines: Iterable[str]) -> ExportData:
    """Parse and check a whole export; raises ValidationError naming the line."""
    data: ExportData | None = None
    end: dict[str, Any] | None = None
    n = 0
    for n, obj in json_lines(lines):
        if data is None:
            data = ExportData(_header(obj, n))
            data.header.setdefault("tables", {})
            continue
        if end is not None:
            raise _fail(n, "records after the end record")
        if not isinstance(obj, dict):
            raise _fail(n, "expected a JSON object")
        kind = obj.get("record")
        if kind == "end":
            end = {"line": n, **obj}
            continue
        if kind == "aux":
            data.rows["aux"].append({"_line": n, **_aux(obj, data.header["tables"], n)})
            continue
        if kind not in KINDS:
            raise _fail(n, f"unknown record type {kind!r}")
        data.rows[kind].append({"_line": n, **_row(str(kind), obj, n)})
    if data is None:
        raise ValidationError("empty file: no export header")
    if end is None:
        raise ValidationError(f"truncated export: no end record after line {n}", line=n)
    counts = {k: len(v) for k, v in data.rows.items()}
    if data.header["version"] < 2 and not counts["version"]:
        counts.pop("version")  # format 1 had no version records
    if end.get("counts") != counts:
        raise _fail(end["line"], f"counts {end.get('counts')} do not match the records {counts}")
    _check_references(data)
    return data


def _unique(rows: list[dict[str, Any]], key: Any, what: str) -> set[Any]:
    seen: set[Any] = set()
    for r in rows:
        k = key(r)
        if k in seen:
            raise _fail(r["_line"], f"duplicate {what} {k!r}")
        seen.add(k)
    return seen


def _check_references(data: ExportData) -> None:
    rows = data.rows
    _unique(rows["predicate"], lambda r: r["name"], "predicate")
    entities = _unique(rows["entity"], lambda r: r["id"], "entity id")
    _unique(rows["entity"], lambda r: r["key"], "entity key")
    _unique(rows["entity_key"], lambda r: r["key"], "entity key")
    _unique(rows["episode"], lambda r: r["id"], "episode id")
    slots = _unique(rows["slot"], lambda r: (r["subject_id"], r["predicate"]), "slot")
    _unique(rows["assertion"], lambda r: r["id"], "assertion id")
    _unique(rows["assertion"], lambda r: r["seq"], "assertion seq")
    _unique(rows["version"], lambda r: r["id"], "version id")
    _unique(rows["tombstone"], lambda r: r["id"], "tombstone id")
    _unique(rows["aux"], lambda r: (r["table"], r["row"].get("id")), "aux row")
    for r in rows["entity_key"]:
        if r["entity_id"] not in entities:
            raise _fail(r["_line"], f"key {r['key']!r} points at no exported entity")
    for r in rows["slot"]:
        if r["subject_id"] not in entities:
            raise _fail(r["_line"], f"slot subject {r['subject_id']!r} is no exported entity")
    for r in rows["assertion"]:
        if (r["subject_id"], r["predicate"]) not in slots:
            raise _fail(r["_line"], "assertion of a slot that is not exported")
        if r["op"] == "assert" and r["object_id"] is None:
            raise _fail(r["_line"], "an assert needs an object_id")
        if r["object_id"] is not None and r["object_id"] not in entities:
            raise _fail(r["_line"], f"object {r['object_id']!r} is no exported entity")
        vf, vt = r["valid_from"], r["valid_to"]
        if vf is not None and vt is not None and vt <= vf:
            raise _fail(r["_line"], "valid_to is not after valid_from")
    _check_versions(data)
    for r in rows["tombstone"]:
        if r["kind"] == "fact" and (r["subject_id"], r["predicate"]) not in slots:
            raise _fail(r["_line"], "tombstone of a slot that is not exported")


def _check_versions(data: ExportData) -> None:
    """Each version names an exported assert and was believed in a sane window.

    Whether a version agrees with its slot's replay is not checked: which
    cardinality was in force when is exactly what the log cannot say.
    """
    asserts = {r["id"]: r for r in data.rows["assertion"] if r["op"] == "assert"}
    for r in data.rows["version"]:
        a = asserts.get(r["assertion_id"])
        if a is None:
            raise _fail(r["_line"], f"version of {r['assertion_id']!r}, no exported assert")
        if not r["id"]:
            raise _fail(r["_line"], "version.id is required")
        vf, vt = r["valid_from"], r["valid_to"]
        if vf is not None and vt is not None and vt <= vf:
            raise _fail(r["_line"], "valid_to is not after valid_from")
        if r["recorded_at"] < a["recorded_at"]:
            raise _fail(r["_line"], "version recorded before its assertion")
        if r["expired_at"] is not None and r["expired_at"] < r["recorded_at"]:
            raise _fail(r["_line"], "expired_at is before recorded_at")

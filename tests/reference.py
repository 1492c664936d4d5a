"""A deliberately naive model of DESIGN.md's temporal rules, for the property tests.

It keeps each key's believed timeline as an explicit list of intervals
(present or absent) and edits it by literal interval surgery, replaying the
whole log for every question. It shares no code with `palimpsest.temporal`,
which keeps a map of start points instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INF = float("inf")
NEG = float("-inf")
ABSENT = object()


@dataclass
class Op:
    kind: str  # "assert" | "end"
    obj: str | None
    start: float  # NEG for "since always"
    end: float  # INF for open
    recorded: int  # transaction time (an integer tick)
    retracted: int | None = None
    erased: bool = False


@dataclass
class Line:
    versions: list[tuple[float, float, object]] = field(default_factory=list)

    def covering(self, t: float) -> tuple[float, float, object] | None:
        for v in self.versions:
            if v[0] <= t < v[1] or (v[0] == NEG and t == NEG):
                return v
        return None

    def cut(self, lo: float, hi: float) -> None:
        kept = []
        for a, b, val in self.versions:
            if b <= lo or a >= hi:
                kept.append((a, b, val))
                continue
            if a < lo:
                kept.append((a, lo, val))
            if b > hi:
                kept.append((hi, b, val))
        self.versions = kept

    def next_start_after(self, t: float) -> float:
        starts = [a for a, _, _ in self.versions if a > t]
        return min(starts) if starts else INF

    def paint(self, lo: float, hi: float, val: object) -> None:
        """A version over exactly [lo, hi); what held at hi resumes there."""
        self.cut(lo, hi)
        self.versions.append((lo, hi, val))
        if hi != INF and self.covering(hi) is None:
            self.versions.append((hi, self.next_start_after(hi), ABSENT))

    def paint_open(self, lo: float, val: object) -> None:
        """A version from lo until the next version start after lo."""
        self.cut(lo, self.next_start_after(lo))
        self.paint(lo, self.next_start_after(lo), val)


def believed_objects(ops: list[Op], cardinality: str, valid_at: float, known_at: int) -> set[str]:
    lines: dict[str | None, Line] = {}
    live = [
        o
        for o in ops
        if not o.erased
        and o.recorded <= known_at
        and (o.retracted is None or o.retracted > known_at)
    ]
    live.sort(key=lambda o: o.recorded)
    for o in live:
        if o.kind == "assert":
            line = lines.setdefault(o.obj if cardinality == "many" else None, Line())
            if o.end == INF:
                line.paint_open(o.start, o.obj)
            else:
                line.paint(o.start, o.end, o.obj)
        else:
            targets = (
                list(lines.values())
                if o.obj is None
                else [lines.setdefault(o.obj if cardinality == "many" else None, Line())]
            )
            for line in targets:
                v = line.covering(o.start)
                if v is not None and v[2] is not ABSENT and (o.obj is None or v[2] == o.obj):
                    line.paint_open(o.start, ABSENT)
    out = set()
    for line in lines.values():
        v = line.covering(valid_at)
        if v is not None and v[2] is not ABSENT:
            out.add(str(v[2]))
    return out

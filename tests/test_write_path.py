"""Shortcuts of the write path give what the long way gives: the replay of a one-entry
log (every brand-new slot of a bulk write) and Fact records built without validation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest import Memory
from palimpsest.models import Fact
from palimpsest.temporal import LogEntry, replay

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def at(days: int | None) -> datetime | None:
    return None if days is None else T0 + timedelta(days=days)


@st.composite
def lone_entries(draw: st.DrawFn) -> tuple[LogEntry, datetime]:
    op = draw(st.sampled_from(["assert", "end"]))
    obj = (
        draw(st.sampled_from(["a", "b"])) if op == "assert" else draw(st.sampled_from([None, "a"]))
    )
    start = at(draw(st.one_of(st.none(), st.integers(0, 9))))
    end = at(draw(st.one_of(st.none(), st.integers(0, 9))))  # inverted windows too
    recorded = at(draw(st.integers(0, 9)))
    retracted = at(draw(st.one_of(st.none(), st.integers(0, 12))))
    assert recorded is not None
    entry = LogEntry("x1", op, obj, start, end if op == "assert" else None, recorded, 1, retracted)
    known = at(draw(st.integers(0, 12)))
    assert known is not None
    return entry, known


@settings(max_examples=400, deadline=None)
@given(lone_entries(), st.sampled_from(["one", "many"]))
def test_a_one_entry_log_replays_as_the_general_path_does(
    case: tuple[LogEntry, datetime], cardinality: str
) -> None:
    entry, known = case
    # an entry recorded after `known` never counts, but makes the log long enough for the
    # general path: the two answers must be the same
    later = LogEntry("x2", "assert", "c", None, None, known + timedelta(days=1), 2)
    card = "one" if cardinality == "one" else "many"
    assert replay([entry], card, known_at=known) == replay([entry, later], card, known_at=known)


def test_written_facts_are_the_models_validation_would_give(mem: Memory) -> None:
    assert Fact.__pydantic_post_init__ is None and Fact.model_config.get("extra") == "forbid"
    facts = mem.assert_many(
        [
            {"subject": "Mira", "predicate": "likes", "object": "jazz", "valid_from": None},
            {"subject": "Mira", "predicate": "lives_in", "object": "Oslo", "author_kind": "tool"},
        ]
    )
    facts.append(mem.end_fact("Mira", "lives_in", at="2031-01-01T00:00:00Z"))
    facts.append(mem.retract(facts[0].id, reason="test"))
    for f in facts:
        again = Fact.model_validate(f.model_dump())
        assert again == f and repr(again) == repr(f)
        assert list(f.__dict__) == list(Fact.model_fields)
        assert f.model_fields_set == set(Fact.model_fields)


def test_a_forked_child_hands_out_other_ids_than_its_parent() -> None:
    import os

    from palimpsest._ids import _new_id

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, then out without running the parent's exit
        os.write(write, " ".join(_new_id("fa") for _ in range(3)).encode())
        os._exit(0)
    os.close(write)
    mine = {_new_id("fa") for _ in range(3)}
    os.waitpid(pid, 0)
    theirs = set(os.read(read, 4096).decode().split())
    assert len(theirs) == 3 and not mine & theirs

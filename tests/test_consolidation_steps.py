"""Consolidation steps on a real memory: dedupe, merge and unmerge, reconcile and contested,
expire, decay and archive, the watermark, reports and the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from palimpsest import Memory

from .conftest import Clock

V = "2025-01-01T00:00:00Z"  # a valid time after every start used below


@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    # facts are asserted explicitly: no extraction, no embeddings (fast)
    with Memory.open(tmp_path / "m", clock=clock, embedder=None, extractor=None) as m:
        yield m


def objects(mem: Memory, s: str, p: str | None = None, **kw: object) -> list[str]:
    return sorted(f.object or "" for f in mem.facts(s, p, valid_at=V, **kw))  # type: ignore[arg-type]


# --- 1. dedupe -----------------------------------------------------------------------------
NOTE = "Meeting notes: the launch moved to the fourteenth of March."


def test_a_replay_is_one_episode_and_a_repeat_is_folded_not_deleted(
    mem: Memory, clock: Clock
) -> None:
    first = mem.remember(NOTE, speaker="Sam", session="a", occurred_at="2029-01-01T00:00:00Z")
    again = mem.remember(NOTE, speaker="Sam", session="a", occurred_at="2029-01-01T00:00:00Z")
    assert again.id == first.id and mem.stats().episodes == 1  # idempotent by fingerprint
    clock.tick()
    copy = mem.remember(
        NOTE.replace(" the ", "  the ").upper(),
        speaker="Sam",
        session="b",
        occurred_at="2029-01-02T00:00:00Z",
    )
    other = mem.remember(NOTE, speaker="Ann", session="c", occurred_at="2029-01-02T00:00:00Z")
    mem.remember("ok thanks", speaker="Sam", session="a")
    mem.remember("ok thanks", speaker="Sam", session="b")  # short: two events, never folded
    clock.tick()
    report = mem.consolidate()
    assert report.counts == {"deduplicated": 1}
    change = report.changes[0]
    assert change.targets == [copy.id, first.id] and "same speaker" in change.reason
    kept = mem.episode(copy.id)  # still readable by id, out of the hot set
    assert kept.archived and kept.text.startswith("MEETING")
    assert not mem.episode(first.id).archived and not mem.episode(other.id).archived
    assert mem.stats().episodes == 5
    clock.tick()
    assert mem.consolidate().changes == []


# --- 2. merge ------------------------------------------------------------------------------
def test_my_sister_merges_into_the_named_sibling_and_the_past_still_reads_as_before(
    mem: Memory, clock: Clock
) -> None:
    mem.assert_fact("my sister", "lives_in", "Auckland", valid_from="2024-01-01T00:00:00Z")
    mem.assert_fact("Mira", "job_title", "paramedic", valid_from=None)
    before_link = clock.tick()
    clock.tick()
    assert mem.consolidate().counts.get("merged") is None  # not linked yet
    mem.assert_fact("user", "sibling", "Mira", valid_from=None)
    before = clock.tick()
    clock.tick()  # the merge is recorded after `before`
    report = mem.consolidate()
    assert report.counts == {"merged": 1}
    change = report.changes[0]
    merge_id = change.targets[0]
    assert "'my sister' names 'Mira'" in change.reason
    # now: one entity, reachable by both names, with both facts
    assert objects(mem, "Mira", "lives_in") == ["Auckland"]
    assert objects(mem, "my sister", "job_title") == ["paramedic"]
    assert "my sister" in mem.entity("Mira").entity.aliases
    # as of before the merge, every name answers as it did
    assert objects(mem, "my sister", known_at=before) == ["Auckland"]
    assert objects(mem, "Mira", known_at=before) == ["paramedic"]
    assert mem.entity("my sister", known_at=before_link).entity.name == "my sister"
    assert [f.object for f in mem.history("my sister", "lives_in")] == ["Auckland"]
    clock.tick()
    assert mem.consolidate().changes == []
    merged_at = clock.tick()
    clock.tick()
    # reversible: new assertions, not deletion; the pair is not merged again
    undone = mem.unmerge(merge_id)
    assert undone.action == "unmerged" and len(undone.targets) == 2
    clock.tick()
    assert objects(mem, "my sister") == ["Auckland"]
    assert objects(mem, "Mira") == ["paramedic"]
    assert objects(mem, "Mira", "lives_in") == []
    assert objects(mem, "Mira", "lives_in", known_at=merged_at) == ["Auckland"]
    assert mem.consolidate().counts.get("merged") is None
    with pytest.raises(Exception, match="already unmerged"):
        mem.unmerge(merge_id)


def test_normalised_names_merge_and_short_names_do_not(mem: Memory, clock: Clock) -> None:
    mem.assert_fact("Café Rio", "located_in", "Lisbon", valid_from=None)
    mem.assert_fact("the cafe-rio", "likes", "jazz", valid_from=None)
    mem.assert_fact("Al", "likes", "tea", valid_from=None)
    mem.assert_fact("AL.", "likes", "coffee", valid_from=None)  # normalises the same: merges
    mem.assert_fact("Alan", "likes", "cake", valid_from=None)
    clock.tick()
    report = mem.consolidate()
    assert report.counts == {"merged": 2}
    assert objects(mem, "Café Rio", "likes") == ["jazz"]
    assert objects(mem, "Alan", "likes") == ["cake"]


def test_unmerge_of_a_merge_a_later_merge_built_on_is_refused_then_undone_in_order(
    mem: Memory, clock: Clock
) -> None:
    from palimpsest.errors import Conflict

    mem.assert_fact("Café Rio", "located_in", "Lisbon", valid_from=None)
    clock.tick()  # the older name wins the merge
    mem.assert_fact("the cafe-rio", "likes", "my sister", valid_from=None)
    mem.assert_fact("Mira", "job_title", "paramedic", valid_from=None)
    clock.tick()
    first = mem.consolidate()  # the cafés merge; "my sister" is nobody yet
    assert first.counts == {"merged": 1}
    cafes = first.changes[0].targets[0]
    mem.assert_fact("user", "sibling", "Mira", valid_from=None)
    clock.tick()
    second = mem.consolidate()  # "my sister" merges into Mira, moving the cafés' copy on
    assert second.counts == {"merged": 1}
    sister = second.changes[0].targets[0]
    assert objects(mem, "Café Rio", "likes") == ["Mira"]
    clock.tick()
    with pytest.raises(Conflict, match=f"rests on it: merge {sister} .'my sister' into 'Mira'"):
        mem.unmerge(cafes)
    assert objects(mem, "Café Rio", "likes") == ["Mira"]  # refused: nothing changed
    clock.tick()
    mem.unmerge(sister)
    assert objects(mem, "Café Rio", "likes") == ["my sister"]
    clock.tick()
    mem.unmerge(cafes)  # follows its copy to where the later unmerge put it back
    assert objects(mem, "Café Rio", "likes") == []
    assert objects(mem, "the cafe-rio", "likes") == ["my sister"]
    assert objects(mem, "Café Rio") == ["Lisbon"] and objects(mem, "Mira") == ["paramedic"]
    assert len(mem.facts(valid_at=V)) == 4  # + user sibling Mira: no duplicates


def test_unmerge_of_a_merge_a_promotion_relied_on_is_refused(mem: Memory, clock: Clock) -> None:
    from palimpsest.errors import Conflict

    def tool_says(subject: str, session: str) -> None:
        ep = mem.remember(
            f"{subject} likes jazz.", speaker="x", author_kind="tool", session=session
        )
        mem.assert_fact(subject, "likes", "jazz", author_kind="tool", evidence=[ep.id])

    mem.assert_fact("Café Rio", "located_in", "Lisbon", valid_from=None)
    clock.tick()  # the older name wins the merge
    tool_says("the cafe-rio", "s1")
    clock.tick()
    merged = mem.consolidate()
    assert merged.counts == {"merged": 1}  # one source: the moved claim stays quarantined
    tool_says("Café Rio", "s2")
    clock.tick()
    promoted = mem.consolidate()
    assert promoted.counts == {"promoted": 1}
    pid = promoted.changes[0].targets[-1]
    clock.tick()
    with pytest.raises(Conflict, match=f"promotion {pid}") as err:
        mem.unmerge(merged.changes[0].targets[0])
    assert err.value.details["blockers"] == [pid]
    assert [f.id for f in mem.facts("Café Rio", "likes")] == [pid]


def test_merge_candidates_and_clusters_are_pure() -> None:
    import numpy as np

    from palimpsest.consolidation import candidates, clusters, distinctive, normalise

    assert normalise("The  Café-Bar") == "cafe bar"
    assert not distinctive("Al") and not distinctive("aaaaaa") and not distinctive("12345")
    assert distinctive("Harbour Health")
    ents = [
        {"id": "a", "name": "Mira", "key": "mira", "type": "thing", "aliases": ["mimi"]},
        {"id": "b", "name": "Mimi", "key": "mimi", "type": "thing", "aliases": []},
        {"id": "c", "name": "my sister", "key": "my sister", "type": "thing", "aliases": []},
        {"id": "d", "name": "Harbour Health", "key": "harbour health", "type": "thing"},
        {"id": "e", "name": "Harbor Health", "key": "harbor health", "type": "thing"},
        {"id": "f", "name": "Ann", "key": "ann", "type": "thing"},
        {"id": "g", "name": "Anne", "key": "anne", "type": "thing"},
    ]
    vec = {
        "d": np.array([1.0, 0.0]),
        "e": np.array([0.99, 0.05]),
        "f": np.array([0.0, 1.0]),
        "g": np.array([0.0, 1.0]),  # identical vectors, but names too short to trust
    }
    pairs = candidates(ents, linked={"c": "a"}, vectors=vec)  # type: ignore[arg-type]
    got = clusters(pairs, ents)
    assert [(c.winner, c.losers) for c in got] == [("a", ("b", "c")), ("d", ("e",))]
    blocked = candidates(ents, linked={"c": "a"}, blocked=[frozenset(("a", "c"))])
    assert [(p.a, p.b) for p in blocked] == [("a", "b")]


# --- 3. reconcile --------------------------------------------------------------------------
def test_the_users_correction_wins_and_is_written_as_a_new_assertion(
    mem: Memory, clock: Clock
) -> None:
    a = mem.assert_fact("user", "age", "40", valid_from="2024-01-01T00:00:00Z")
    clock.tick()
    b = mem.assert_fact("user", "age", "41", valid_from="2024-01-01T00:00:00Z")
    before = clock.tick()
    clock.tick()
    report = mem.consolidate()
    assert report.counts == {"reconciled": 1}
    change = report.changes[0]
    assert change.targets[:2] == [a.id, b.id] and "41 wins" in change.reason
    assert "correction" in change.reason
    new = mem.facts("user", "age", valid_at=V)
    assert [(f.object, f.id, f.status) for f in new] == [("41", change.targets[2], "current")]
    assert [f.object for f in mem.facts("user", "age", valid_at=V, known_at=before)] == ["41"]
    assert {f.id for f in mem.history("user", "age")} >= {a.id, b.id}  # nothing deleted
    clock.tick()
    assert mem.consolidate(full=True).changes == []  # settled: even a full pass agrees


def test_independent_evidence_beats_a_single_newer_source(mem: Memory, clock: Clock) -> None:
    eps = [
        mem.remember(t, speaker=s, author_kind="third_party", session=sess).id
        for t, s, sess in (
            ("Bob works at Initech, I saw him there.", "Ann", "s1"),
            ("Bob has been at Initech for a while.", "Cy", "s2"),
            ("Bob works at Globex.", "Dee", "s3"),
        )
    ]
    start = "2024-01-01T00:00:00Z"
    for obj, ev in (("Initech", eps[0]), ("Initech", eps[1]), ("Globex", eps[2])):
        mem.assert_fact(
            "Bob",
            "works_at",
            obj,
            valid_from=start,
            author_kind="third_party",
            quarantined=False,
            evidence=[ev],
        )
    assert objects(mem, "Bob", "works_at") == ["Globex"]  # the latest record, before weighing
    clock.tick()
    report = mem.consolidate()
    (change,) = [c for c in report.changes if c.step == "reconcile"]
    assert change.action == "reconciled" and "2 independent sources against 1" in change.reason
    assert objects(mem, "Bob", "works_at") == ["Initech"]


def test_level_sources_are_contested_everywhere_until_resolved(mem: Memory, clock: Clock) -> None:
    for obj in ("Initech", "Globex"):
        mem.assert_fact(
            "Bob",
            "works_at",
            obj,
            valid_from="2024-01-01T00:00:00Z",
            author_kind="tool",
            quarantined=False,
        )
    before = clock.tick()
    clock.tick()
    report = mem.consolidate()
    assert report.counts == {"contested": 1}
    assert "Initech" in report.changes[0].reason and "Globex" in report.changes[0].reason
    marked = clock.tick()
    assert [f.status for f in mem.facts("Bob", "works_at", valid_at=V)] == ["contested"]
    assert [f.status for f in mem.entity("Bob", valid_at=V).outgoing] == ["contested"]
    assert [f.status for f in mem.snapshot(valid_at=V).facts] == ["contested"]
    hits = [
        h for h in mem.recall("Where does Bob work?", valid_at=V, min_score=0) if h.kind == "fact"
    ]
    assert hits and {h.status for h in hits} == {"contested"}  # recall says so too
    assert [f.status for f in mem.facts("Bob", "works_at", valid_at=V, known_at=before)] == [
        "current"
    ]
    assert mem.consolidate().changes == [] and mem.consolidate(full=True).changes == []
    mem.assert_fact("Bob", "works_at", "Globex", valid_from="2024-01-01T00:00:00Z")
    clock.tick()
    report = mem.consolidate()
    assert report.counts == {"reconciled": 1}
    assert [(f.object, f.status) for f in mem.facts("Bob", "works_at", valid_at=V)] == [
        ("Globex", "current")
    ]
    assert [f.status for f in mem.facts("Bob", "works_at", valid_at=V, known_at=marked)] == [
        "contested"
    ]


def test_reconcile_outcome_is_pure() -> None:
    from datetime import UTC, datetime

    from palimpsest.consolidation import conflicts, outcome

    t = datetime(2024, 1, 1, tzinfo=UTC)

    def a(i: str, obj: str, kind: str, ev: list[str], seq: int) -> dict[str, object]:
        return {
            "id": i,
            "op": "assert",
            "object_id": obj,
            "valid_from": t,
            "quarantined": False,
            "retracted_at": None,
            "recorded_at": t,
            "seq": seq,
            "author_kind": kind,
            "evidence": ev,
        }

    log = [a("1", "x", "tool", ["e1"], 1), a("2", "y", "user", [], 2), a("3", "x", "tool", [], 3)]
    group = conflicts(log)[t]
    out = outcome(group, fingerprint={"e1": "f1"}, names={})
    assert out.winner == "y" and "more trusted" in out.reason
    copies = [a("1", "x", "tool", ["e1"], 1), a("2", "y", "tool", ["e2"], 2)]
    copies.append(a("3", "x", "tool", ["e3"], 3))  # e3 is a copy of e1: one source
    out = outcome(copies, fingerprint={"e1": "f1", "e2": "f2", "e3": "f1"}, names={})
    assert out.winner is None and out.contested == ("x", "y")


# --- 5. expire and 6. decay ----------------------------------------------------------------
def test_closed_windows_are_reported_once_and_nothing_is_removed(mem: Memory, clock: Clock) -> None:
    f = mem.assert_fact(
        "Eve",
        "lives_in",
        "Rome",
        valid_from="2020-01-01T00:00:00Z",
        valid_to="2021-01-01T00:00:00Z",
    )
    mem.assert_fact("Eve", "likes", "opera", valid_from=None)
    clock.tick()
    report = mem.consolidate()
    assert report.counts == {"ended": 1} and report.changes[0].targets == [f.id]
    assert [x.status for x in mem.history("Eve", "lives_in")] == ["ended"]
    assert mem.facts("Eve", "lives_in", valid_at="2020-06-01T00:00:00Z")[0].object == "Rome"
    clock.tick()
    assert mem.consolidate().changes == []


def test_cold_unimportant_episodes_are_archived_not_deleted(mem: Memory, clock: Clock) -> None:
    from palimpsest.consolidation import cold, weight

    assert weight(0.4, age_days=30.0) == 0.2 and not cold(0.9, age_days=10_000)
    low = mem.remember("The weather was grey all day.", importance=0.2, session="s")
    high = mem.remember("My passport number changed.", importance=0.9, session="s")
    clock.tick(days=10)
    assert mem.consolidate().changes == []  # too young to be cold
    clock.tick(days=200)
    report = mem.consolidate()
    assert report.counts == {"archived": 1} and report.changes[0].targets == [low.id]
    assert mem.episode(low.id).archived and not mem.episode(high.id).archived
    assert mem.stats().episodes == 2
    clock.tick()
    assert mem.consolidate().changes == []


# --- incremental, reports, CLI -------------------------------------------------------------
def test_watermark_reports_and_dry_run(mem: Memory, clock: Clock, tmp_path: Path) -> None:
    mem.assert_fact("user", "age", "40", valid_from="2024-01-01T00:00:00Z")
    mem.assert_fact("user", "age", "41", valid_from="2024-01-01T00:00:00Z")
    clock.tick()
    dry = mem.consolidate(dry_run=True)
    assert dry.counts == {"reconciled": 1} and dry.since is None
    first = mem.consolidate()
    assert first.counts == {"reconciled": 1}
    second = mem.consolidate()
    assert second.since is not None and second.summary == "nothing to consolidate"
    folder = tmp_path / "m" / "reports"
    assert len(list(folder.glob("*.json"))) == 2 and len(list(folder.glob("*.txt"))) == 2
    text = sorted(folder.glob("*.txt"))[0].read_text()
    assert "since the beginning: 1 reconciled" in text and "41 wins" in text
    saved = json.loads(sorted(folder.glob("*.json"))[0].read_text())
    assert saved["summary"] == "1 reconciled" and saved["counts"] == {"reconciled": 1}
    assert [r.summary for r in mem.consolidation_reports()] == [
        "1 reconciled",
        "nothing to consolidate",
    ]


def test_cli_consolidate_merges_and_unmerge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.cli import app
    from palimpsest.consolidation.steps import merge as merge_step

    monkeypatch.setattr(merge_step, "EMBED_MAX", 0)  # no MiniLM load for names

    path = tmp_path / "cli"
    with Memory.open(path, embedder=None) as m:
        m.assert_fact("Café Rio", "located_in", "Lisbon", valid_from=None)
        m.assert_fact("cafe rio", "likes", "jazz", valid_from=None)
    runner = CliRunner()
    out = runner.invoke(app, ["--path", str(path), "consolidate", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["counts"] == {"merged": 1} and report["summary"] == "1 merged"
    listed = runner.invoke(app, ["--path", str(path), "consolidate", "--merges", "--json"])
    merge_id = json.loads(listed.output)[0]["id"]
    undo = runner.invoke(app, ["--path", str(path), "unmerge", merge_id])
    assert undo.exit_code == 0 and "separated again" in undo.output, undo.output
    again = runner.invoke(app, ["--path", str(path), "unmerge", merge_id])
    assert again.exit_code != 0
    hist = runner.invoke(app, ["--path", str(path), "consolidate", "--history"])
    assert "1 merged" in hist.output


def test_dedupe_rules_are_pure() -> None:
    from datetime import UTC, datetime

    import numpy as np

    from palimpsest.consolidation import duplicates

    t = datetime(2024, 1, 1, tzinfo=UTC)

    def row(i: str, speaker: str, fp: str, n: int = 40) -> dict[str, object]:
        return {"id": i, "speaker": speaker, "fingerprint": fp, "recorded_at": t, "length": n}

    rows = [row("a", "s", "f1"), row("b", "s", "f2"), row("c", "s", "f3"), row("d", "t", "f4")]
    vec = {
        "a": np.array([1.0, 0.0, 0.0]),
        "b": np.array([0.99, 0.05, 0.0]),  # cosine ~0.999 with a: a near copy
        "c": np.array([0.9, 0.43, 0.0]),  # ~0.90: a different thing
        "d": np.array([1.0, 0.0, 0.0]),  # identical vector, another speaker
    }
    found = duplicates(rows, new=None, known={}, vectors=vec)  # type: ignore[arg-type]
    assert [(d.id, d.canonical) for d in found] == [("b", "a")]
    # a copy of a copy points at the first; already folded copies are not reported again
    rows.append(row("e", "s", "f2"))
    again = duplicates(rows, new={"e"}, known={"b": "a"}, vectors=vec)  # type: ignore[arg-type]
    assert [(d.id, d.canonical) for d in again] == [("e", "a")]
    assert duplicates([row("x", "s", "f", 5), row("y", "s", "f", 5)], new=None, known={}) == []


def test_dedupe_in_blocks_finds_what_one_by_one_comparison_finds() -> None:
    from datetime import UTC, datetime, timedelta

    import numpy as np

    from palimpsest.consolidation import _dedupe, duplicates

    rng = np.random.default_rng(7)
    t = datetime(2024, 1, 1, tzinfo=UTC)
    n = 1300  # more than two blocks
    base = rng.normal(size=(n, 16)).astype(np.float32)
    for i in rng.choice(np.arange(1, n), size=120, replace=False):  # planted near copies
        base[i] = base[rng.integers(0, i)] + rng.normal(scale=0.02, size=16)
    rows = [
        {
            "id": f"e{i:05d}",
            "speaker": "s",
            "fingerprint": f"f{i}",
            "recorded_at": t + timedelta(seconds=i),
            "length": 40,
        }
        for i in range(n)
    ]
    vec = {r["id"]: base[i] for i, r in enumerate(rows)}

    def naive() -> list[tuple[str, str]]:
        m = base / np.linalg.norm(base, axis=1, keepdims=True)
        out: list[tuple[str, str]] = []
        for pos in range(1, n):
            sims = m[:pos] @ m[pos]
            if sims.max() >= _dedupe.THRESHOLD:
                out.append((f"e{pos:05d}", f"e{int(sims.argmax()):05d}"))
        return out

    found = duplicates(rows, new=None, known={}, vectors=vec)  # type: ignore[arg-type]
    assert len(found) >= 100
    assert [(d.id, d.canonical) for d in found] == naive()


def test_cli_consolidate_shows_each_step_then_the_changes(tmp_path: Path) -> None:
    from palimpsest.cli import app

    path = tmp_path / "m"
    with Memory.open(path, extractor=None, embedder=None) as mem:
        mem.assert_fact(
            "user",
            "works_at",
            "Acme",
            valid_from="2020-01-01T00:00:00Z",
            valid_to="2021-01-01T00:00:00Z",
        )
    out = CliRunner().invoke(app, ["--path", str(path), "consolidate"])
    assert out.exit_code == 0, out.output
    assert "1 ended" in out.stdout and "its window closed" in out.stdout
    assert "consolidating: decay" in out.stderr  # the progress bar, on stderr


def test_unmerge_of_a_merge_a_reconciliation_relied_on_is_refused(
    mem: Memory, clock: Clock
) -> None:
    from palimpsest.errors import Conflict

    mem.assert_fact("Mira Okafor", "lives_in", "Lisbon", valid_from=None, author_kind="agent",
                    quarantined=False)  # fmt: skip
    clock.tick()  # the older name wins the merge
    ep = mem.remember("mira okafor lives in Porto now.", session="s1")
    mem.assert_fact("mira-okafor", "lives_in", "Porto", valid_from=None, evidence=[ep.id])
    clock.tick()
    first = mem.consolidate()  # the merge brings the user's claim over; it wins there
    assert first.counts.get("merged") == 1 and first.counts.get("reconciled") == 1, first.counts
    merge_id = next(c.targets[0] for c in first.changes if c.action == "merged")
    rid = next(c.targets[-1] for c in first.changes if c.action == "reconciled")
    clock.tick()
    with pytest.raises(Conflict, match=f"reconciliation {rid}") as err:
        mem.unmerge(merge_id)
    assert err.value.details["blockers"] == [rid]
    assert [f.object for f in mem.facts("Mira Okafor", "lives_in", valid_at=V)] == ["Porto"]
    mem.retract(rid, reason="wrong")  # once what rests on the merge is undone, it unmerges
    clock.tick()
    mem.unmerge(merge_id)
    assert [f.object for f in mem.facts("mira-okafor", "lives_in", valid_at=V)] == ["Porto"]
    assert [f.object for f in mem.facts("Mira Okafor", "lives_in", valid_at=V)] == ["Lisbon"]

"""The MCP server (`palimpsest mcp`) and the memory-server mapping behind its compat tools.

The acceptance test starts the installed console script as a real subprocess and
talks to it with the official MCP client over stdio; the mapping is also tested
in-process against a real memory. Each test runs on each store (`every_store`): a Kùzu
directory and a PostgreSQL database.
"""

from __future__ import annotations

import io
import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.engine.pages import MAX_VIEW_FACTS
from palimpsest.errors import NotFound, ValidationError
from palimpsest.mcp import memory_compat as compat
from palimpsest.mcp.protocol import Result, Tools, run_stdio

from .conftest import Clock, Places
from .layers import _console_script, _env

pytestmark = pytest.mark.every_store

ENGINE_TOOLS = {
    "remember",
    "assert_fact",
    "end_fact",
    "retract",
    "erase",
    "facts",
    "history",
    "entity",
    "snapshot",
    "changes",
    "recall",
    "consolidate",
}
MEMORY_SERVER_TOOLS = {
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
}


def _with_server(place: str | Path, logs: Path, body: Callable[[Any], Awaitable[None]]) -> None:
    """Start `palimpsest mcp --no-models --path <place>` and run `body(session)` against it
    (layers.mcp_session, for a place that may be a database URL: its log goes in `logs`)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ["mcp", "--path", str(place), "--no-models"]
    params = StdioServerParameters(command=_console_script(), args=args, env=_env())

    async def run() -> None:
        with (logs / "mcp-server.log").open("w") as log, anyio.fail_after(120):
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await body(session)

    anyio.run(run)


async def _call(session: Any, tool: str, **arguments: Any) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    text = result.content[0].text
    if tool.startswith("delete_"):  # the memory server answers deletes with a sentence
        assert text == result.structured_content["message"]
    elif tool.startswith("create_") or tool == "add_observations":  # the bare list, as it does
        assert [json.loads(text)] == list(result.structured_content.values())
    else:
        assert json.loads(text) == result.structured_content
    return result.structured_content


def test_engine_tools_over_stdio(tmp_path: Path, place: str | Path) -> None:
    async def body(session: Any) -> None:
        listed = {t.name for t in (await session.list_tools()).tools}
        assert listed >= ENGINE_TOOLS | MEMORY_SERVER_TOOLS

        sydney = await _call(
            session,
            "assert_fact",
            subject="user",
            predicate="lives_in",
            object="Sydney",
            valid_from="2024-06-01T00:00:00Z",
        )
        k1 = sydney["recorded_at"]
        melbourne = await _call(
            session,
            "assert_fact",
            subject="user",
            predicate="lives_in",
            object="Melbourne",
            valid_from="2024-08-01T00:00:00Z",
        )
        assert melbourne["recorded_at"] > k1
        sept = "2024-09-01T00:00:00Z"
        then = await _call(session, "facts", subject="user", valid_at=sept, known_at=k1)
        now = await _call(session, "facts", subject="user", predicate="lives_in", valid_at=sept)
        assert [f["object"] for f in then["facts"]] == ["Sydney"]  # the older belief only
        assert [f["object"] for f in now["facts"]] == ["Melbourne"]

        ended = await _call(
            session, "end_fact", subject="user", predicate="lives_in", at="2025-01-01T00:00:00Z"
        )
        assert ended["op"] == "end" and ended["applied"] is True
        later = await _call(session, "facts", subject="user", valid_at="2025-06-01T00:00:00Z")
        assert later["facts"] == []

        retracted = await _call(session, "retract", fact_id=melbourne["id"], reason="wrong")
        assert retracted["status"] == "retracted"
        now = await _call(session, "facts", subject="user", valid_at=sept)
        assert [f["object"] for f in now["facts"]] == ["Sydney"]  # what it covered is back

        history = await _call(session, "history", subject="user", predicate="lives_in")
        statuses = {(f["object"], f["status"]) for f in history["facts"]}
        assert ("Melbourne", "retracted") in statuses and history["omitted"] == 0

        for i in range(3):
            await _call(session, "assert_fact", subject="user", predicate="likes", object=f"x{i}")
        snap = await _call(session, "snapshot", limit=2)
        assert sum(len(g["facts"]) for g in snap["entities"]) == 2
        assert snap["omitted_facts"] == snap["total_facts"] - 2 > 0

        changes = await _call(session, "changes", since="2024-01-01T00:00:00Z")
        assert {f["object"] for f in changes["learned"]} >= {"Sydney", "Melbourne"}
        assert {"since", "until", "known_at", "started", "ended", "omitted"} <= set(changes)

        # --no-models: no embedder, so recall finds episodes by their words (full text) only
        await _call(session, "remember", text="My sister Mira arrives from Lisbon on Friday.")
        hits = (await _call(session, "recall", query="when does Mira arrive from Lisbon?"))["hits"]
        assert hits and hits[0]["kind"] == "episode" and "Lisbon" in hits[0]["text"]
        assert hits[0]["channels"]["bm25"] > 0
        assert (await _call(session, "recall", query="quantum chromodynamics"))["hits"] == []

        report = await _call(session, "consolidate", dry_run=True)
        assert report["dry_run"] is True

        # an engine error is a tool error carrying its stable code; the server lives on
        bad = await session.call_tool("retract", {"fact_id": "fa_nope"})
        assert bad.is_error and bad.content[0].text.startswith("error [not_found]: ")
        naive = await session.call_tool("facts", {"subject": "user", "valid_at": "2024-09-01"})
        assert naive.is_error and naive.content[0].text.startswith("error [naive_datetime]")
        assert (await _call(session, "entity", name="user"))["entity"]["name"] == "user"

        tombs = await _call(session, "erase", id=sydney["id"], reason="privacy")
        assert [t["id"] for t in tombs["tombstones"]] == [sydney["id"]]
        then = await _call(session, "facts", subject="user", valid_at=sept, known_at=k1)
        assert then["facts"] == []  # erased from every past view too
        again = await session.call_tool("erase", {"id": sydney["id"]})
        assert again.is_error and again.content[0].text.startswith("error [erased]: ")

    _with_server(place, tmp_path, body)


def _items(schema: dict[str, Any], prop: str) -> dict[str, Any]:
    """The (dereferenced) item schema of an array property."""
    item: dict[str, Any] = schema["properties"][prop]["items"]
    ref = item.get("$ref")
    return schema["$defs"][ref.rsplit("/", 1)[1]] if ref else item


def test_memory_server_tools_over_stdio(tmp_path: Path, place: str | Path) -> None:
    async def body(session: Any) -> None:
        tools = {t.name: t.input_schema for t in (await session.list_tools()).tools}
        # the official server's input shapes, field for field
        assert _items(tools["create_entities"], "entities")["required"] == [
            "name",
            "entityType",
            "observations",
        ]
        for name in ("create_relations", "delete_relations"):
            assert _items(tools[name], "relations")["required"] == ["from", "to", "relationType"]
        assert _items(tools["add_observations"], "observations")["required"] == [
            "entityName",
            "contents",
        ]
        assert _items(tools["delete_observations"], "deletions")["required"] == [
            "entityName",
            "observations",
        ]
        assert tools["delete_entities"]["required"] == ["entityNames"]
        assert tools["open_nodes"]["required"] == ["names"]
        assert tools["search_nodes"]["required"] == ["query"]
        assert "required" not in tools["read_graph"]

        made = await _call(
            session,
            "create_entities",
            entities=[
                {"name": "Mira", "entityType": "person", "observations": ["plays the cello"]},
                {"name": "Berlin", "entityType": "city", "observations": []},
                {"name": "Mira", "entityType": "person", "observations": []},  # a duplicate
            ],
        )
        assert [e["name"] for e in made["entities"]] == ["Mira", "Berlin"]
        rels = await _call(
            session,
            "create_relations",
            relations=[
                {"from": "Mira", "to": "Berlin", "relationType": "lives_in"},
                {"from": "Berlin", "to": "Mira", "relationType": "is home of"},
            ],
        )
        assert [r["relationType"] for r in rels["relations"]] == ["lives_in", "is home of"]
        added = await _call(
            session,
            "add_observations",
            observations=[{"entityName": "Mira", "contents": ["plays the cello", "likes rain"]}],
        )
        assert added["results"] == [{"entityName": "Mira", "addedObservations": ["likes rain"]}]

        opened = await _call(session, "open_nodes", names=["Mira"])
        assert opened["entities"] == [
            {
                "name": "Mira",
                "entityType": "person",
                "observations": ["plays the cello", "likes rain"],
            }
        ]
        assert len(opened["relations"]) == 2  # both directions touch Mira
        found = await _call(session, "search_nodes", query="RAIN")
        assert [e["name"] for e in found["entities"]] == ["Mira"]
        assert len(found["relations"]) == 2

        gone = await _call(
            session,
            "delete_observations",
            deletions=[{"entityName": "Mira", "observations": ["likes rain"]}],
        )
        assert gone == {"success": True, "message": "Observations deleted successfully"}
        gone = await _call(
            session,
            "delete_relations",
            relations=[{"from": "Berlin", "to": "Mira", "relationType": "is home of"}],
        )
        assert gone["message"] == "Relations deleted successfully"
        gone = await _call(session, "delete_entities", entityNames=["Berlin", "Atlantis"])
        assert gone["message"] == "Deleted 1 of 2 entities. Not found: Atlantis"

        graph = await _call(session, "read_graph")
        assert graph["entities"] == [
            {"name": "Mira", "entityType": "person", "observations": ["plays the cello"]}
        ]
        assert graph["relations"] == []
        assert "omitted" not in graph  # the whole graph: the official shape, nothing more
        # a delete is a retraction: history still has the relation (`lives_in` is the
        # engine's one-valued predicate, so the additive relation is stored coded)
        coded = compat.relation_predicate_name("lives_in", plain=False)
        history = await _call(session, "history", subject="Mira", predicate=coded)
        assert [f["status"] for f in history["facts"]] == ["retracted"]

        await _call(
            session,
            "create_entities",
            entities=[{"name": f"e{i}", "entityType": "t", "observations": []} for i in range(4)],
        )
        page = await _call(session, "read_graph", limit=2)
        assert len(page["entities"]) == 2 and page["omitted"]["entities"] == 3
        assert "2 of 5 entities" in page["summary"]

        # the bound is stated and enforced
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert "10000 at most" in " ".join((listed["read_graph"].description or "").split())
        bound = listed["read_graph"].input_schema["properties"]["limit"]["maximum"]
        assert bound == compat.MAX_ENTITIES
        flood = await session.call_tool("read_graph", {"limit": 100_000})
        assert flood.is_error

        missing = await session.call_tool(
            "add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}
        )
        assert missing.is_error
        assert missing.content[0].text == "error [not_found]: Entity with name Nobody not found"

    _with_server(place, tmp_path, body)


# --- the mapping, in process -----------------------------------------------------------------
def test_relation_types_come_back_as_sent() -> None:
    for sent in ("knows", "is friends with", "WORKS_AT", "Works-For", "visitó", "住んでいる"):
        name = compat.relation_predicate_name(sent)
        assert compat.relation_type(name) == sent
        assert name == sent or name.startswith("rt_")
    assert compat.relation_predicate_name("knows") == "knows"  # snake_case is its own name
    assert compat.relation_predicate_name("knows", plain=False) != "knows"
    assert compat.relation_type("lives_in") == "lives_in"
    with pytest.raises(ValidationError):
        compat.relation_predicate_name("  ")
    with pytest.raises(ValidationError, match="at most 38 bytes"):
        compat.relation_predicate_name("X" * 39)


def _abcd(mem: Memory) -> None:
    compat.create_entities(
        mem, [{"name": n, "entityType": "t", "observations": []} for n in "abcd"]
    )
    rels = [("a", "b"), ("a", "c"), ("c", "d")]
    compat.create_relations(mem, [{"from": x, "to": y, "relationType": "r"} for x, y in rels])


def test_the_graph_reads_are_public_verbs(mem: Memory, clock: Clock) -> None:
    """What the memory-server tools read, `Memory` answers itself (so they run the same
    through an owner): names to ids, the point query for many slots, graph pages."""
    _abcd(mem)
    compat.add_observations(mem, [{"entityName": "d", "contents": ["x1", "x2"]}])
    clock.tick()
    ids = mem.entity_ids(["A", "nobody", "c"])
    assert set(ids) == {"a", "c"} and ids["a"][1] == "a"
    a, c = ids["a"][0], ids["c"][0]
    got = mem.facts_of([a, c, "en_unknown"], ["r", "entity_type", "no_such_predicate"])
    assert sorted((f.subject, f.predicate, f.object) for f in got) == [
        ("a", "entity_type", "t"),
        ("a", "r", "b"),
        ("a", "r", "c"),
        ("c", "entity_type", "t"),
        ("c", "r", "d"),
    ]
    assert all(f.status == "current" for f in got)
    assert mem.facts_of([a], ["r"], known_at=clock.now - timedelta(days=1)) == []
    shape = {"type_predicate": compat.ENTITY_TYPE, "note_predicate": compat.OBSERVATION}
    page = mem.graph_page(limit=1, relation_limit=1, note_limit=1, **shape)
    assert [(e.name, e.type) for e in page.entities] == [("a", "t")]
    assert (page.omitted_entities, page.omitted_relations) == (3, 2)
    d = mem.graph_page("X2", note_limit=1, **shape)
    assert [(e.name, e.notes) for e in d.entities] == [("d", ["x1"])] and d.omitted_notes == 1
    nodes = mem.graph_nodes([c, "en_unknown", a], **shape)
    assert [e.name for e in nodes.entities] == ["c", "a"]
    assert {(r.source, r.target) for r in nodes.relations} == {("a", "b"), ("a", "c"), ("c", "d")}
    for bad in ("en_x", [1]):
        with pytest.raises(ValidationError):
            mem.facts_of(bad, ["r"])  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        mem.graph_page(limit=0, **shape)


def test_read_graph_pages_and_counts_what_it_leaves_out(mem: Memory, clock: Clock) -> None:
    _abcd(mem)
    clock.tick()
    page = compat.read_graph(mem, limit=1, relation_limit=1)
    assert [e["name"] for e in page["entities"]] == ["a"]  # best connected first
    assert page["omitted"] == {"entities": 3, "relations": 2, "observations": 0}
    assert "1 of 4 entities" in page["summary"] and "1 of 3 relations" in page["summary"]
    rest = compat.read_graph(mem, limit=10, relation_limit=10, offset=1)
    assert [e["name"] for e in rest["entities"]] == ["c", "b", "d"]
    # relations inside the page come before those leaving it
    inner = compat.read_graph(mem, limit=2, relation_limit=1)
    assert inner["relations"] == [{"from": "a", "to": "c", "relationType": "r"}]
    # observations are bounded per entity too; open_nodes shows them all
    many = [f"note {i:04}" for i in range(compat.OBSERVATION_LIMIT + 5)]
    compat.add_observations(mem, [{"entityName": "d", "contents": many}])
    clock.tick()
    d = compat.search_nodes(mem, "note 1")
    assert [e["name"] for e in d["entities"]] == ["d"]
    assert d["entities"][0]["observations"] == many[: compat.OBSERVATION_LIMIT]
    assert d["omitted"]["observations"] == 5 and "5 observations left out" in d["summary"]
    assert len(compat.open_nodes(mem, ["d"])["entities"][0]["observations"]) == len(many)
    for bad in ({"limit": compat.MAX_ENTITIES + 1}, {"limit": 0}, {"offset": -1}):
        with pytest.raises(ValidationError):
            compat.read_graph(mem, **bad)
    with pytest.raises(ValidationError, match="relation_limit: at most"):
        compat.search_nodes(mem, "a", relation_limit=compat.MAX_RELATIONS + 1)


def test_bounded_reads_agree_with_the_whole_snapshot(mem: Memory, clock: Clock) -> None:
    """read_graph/search_nodes choose their page in the store; unbounded, they must say
    what the reference mapping (`build_graph` over a snapshot) says."""
    _abcd(mem)
    compat.create_entities(
        mem, [{"name": "Ada", "entityType": "person", "observations": ["likes tea", "Rows"]}]
    )
    clock.tick()
    compat.create_relations(mem, [{"from": "Ada", "to": "a", "relationType": "works at"}])
    mem.assert_fact("Ada", "age", "36")  # a value object: type "value"
    mem.assert_fact("b", "knows", "Zed")  # an end with no type: ""
    mem.assert_fact("Ada", "likes", "jazz", author_kind="agent")  # quarantined: not shown
    clock.tick()
    compat.delete_relations(mem, [{"from": "a", "to": "b", "relationType": "r"}])
    clock.tick()
    snapshot = compat.build_graph(
        mem.snapshot().facts, {p.name: p.object_kind for p in mem.predicates()}
    )

    def norm(graph: dict[str, Any]) -> tuple[Any, ...]:
        ents = sorted(
            (e["name"], e["entityType"], sorted(e["observations"])) for e in graph["entities"]
        )
        rels = sorted((r["from"], r["to"], r["relationType"]) for r in graph["relations"])
        return ents, rels

    whole = compat.read_graph(mem, limit=500, relation_limit=1000)
    assert norm(whole) == norm(snapshot) and "omitted" not in whole
    for needle in ("ROW", "person", "value", "a", "tea", "zed", "nothing at all"):
        found = compat.search_nodes(mem, needle, limit=500, relation_limit=1000)
        want = [
            e
            for e in snapshot["entities"]
            if needle.lower() in e["name"].lower()
            or needle.lower() in e["entityType"].lower()
            or any(needle.lower() in o.lower() for o in e["observations"])
        ]
        names = {e["name"] for e in want}
        rels = [r for r in snapshot["relations"] if r["from"] in names or r["to"] in names]
        assert norm(found) == norm({"entities": want, "relations": rels}), needle


def test_the_view_answers_what_the_store_reads_answer(mem: Memory, clock: Clock) -> None:
    """The graph pages come from an in-memory view of the graph (`engine.graph_view`);
    they must answer exactly what the reads in Kùzu answer: same page, order, counts."""
    _abcd(mem)
    compat.create_entities(
        mem, [{"name": "Ada", "entityType": "person", "observations": ["likes tea", "Rows"]}]
    )
    clock.tick()
    compat.add_observations(mem, [{"entityName": "a", "contents": ["Tea\ntime", "row 2"]}])
    compat.create_relations(mem, [{"from": "Ada", "to": "a", "relationType": "works at"}])
    compat.create_relations(mem, [{"from": "Ada", "to": "Nova", "relationType": "KNOWS"}])
    mem.assert_fact("Ada", "age", "36")  # a value object: type "value"
    mem.assert_fact("b", "knows", "Zed")  # an end with no type: ""
    mem.assert_fact("Ada", "likes", "jazz", author_kind="agent")  # quarantined: not shown
    soon = clock.now + timedelta(hours=1)
    mem.assert_fact("c", "knows", "Oslo", valid_to=soon)  # ends in an hour
    mem.assert_fact("d", "knows", "Rome", valid_from=soon)  # begins in an hour
    clock.tick()
    compat.delete_relations(mem, [{"from": "a", "to": "b", "relationType": "r"}])
    clock.tick()
    pages = mem._pages

    def in_kuzu(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        pages.max_view_facts = -1  # no view: every page is read in Kùzu
        pages.forget()
        try:
            return fn(*args, **kwargs)
        finally:
            pages.max_view_facts = MAX_VIEW_FACTS
            pages.forget()

    def same() -> None:
        for needle in ("", "ROW", "person", "value", "a", "tea", "zed", "o", "nothing"):
            for limit, offset, rels, obs in [(500, 0, 1000, 1000), (1, 0, 1, 1), (3, 2, 2, 0)]:
                args = {"limit": limit, "offset": offset, "relation_limit": rels}
                args["observation_limit"] = obs
                want = in_kuzu(compat.search_nodes, mem, needle, **args)
                assert compat.search_nodes(mem, needle, **args) == want, needle
        assert compat.read_graph(mem) == in_kuzu(compat.read_graph, mem)
        names = ["Ada", "a", "b", "Zed", "Nova", "nobody", "ADA", "Oslo", "Rome"]
        assert compat.open_nodes(mem, names) == in_kuzu(compat.open_nodes, mem, names)

    same()
    assert [v for _, v in pages._views.values()] != [None]  # the reads above used the view
    assert "Rome" not in str(compat.read_graph(mem))
    clock.tick(hours=2)  # a valid-time boundary passed: the view is read again
    same()
    assert "Rome" in str(compat.read_graph(mem))
    assert "Oslo" not in str(compat.read_graph(mem))
    # a write moves the store's fact generation: the next page sees it
    mem.assert_fact("Ada", "knows", "Quinn")
    assert "Quinn" in str(compat.search_nodes(mem, "quinn"))


def test_relations_are_additive_and_leave_the_vocabulary_alone(mem: Memory, clock: Clock) -> None:
    compat.create_entities(
        mem,
        [
            {"name": "Ada", "entityType": "person", "observations": []},
            {"name": "Acme", "entityType": "company", "observations": []},
            {"name": "Globex", "entityType": "company", "observations": []},
        ],
    )
    clock.tick()
    compat.create_relations(mem, [{"from": "Ada", "to": "Acme", "relationType": "works_at"}])
    clock.tick()
    two = [
        {"from": "Ada", "to": "Globex", "relationType": "works_at"},
        {"from": "Ada", "to": "Globex", "relationType": "works at"},
    ]
    assert compat.create_relations(mem, two) == two
    clock.tick()
    rels = compat.open_nodes(mem, ["Ada"])["relations"]
    assert sorted((r["to"], r["relationType"]) for r in rels) == [
        ("Acme", "works_at"),
        ("Globex", "works at"),
        ("Globex", "works_at"),
    ]  # the official server keeps every one; so does this
    assert mem.predicate("works_at").cardinality == "one"  # the engine's meaning is untouched
    compat.delete_relations(mem, [{"from": "Ada", "to": "Globex", "relationType": "works_at"}])
    clock.tick()
    rels = compat.open_nodes(mem, ["Ada"])["relations"]
    assert sorted((r["to"], r["relationType"]) for r in rels) == [
        ("Acme", "works_at"),
        ("Globex", "works at"),
    ]


def test_delete_entity_is_a_retraction_that_keeps_others(mem: Memory, clock: Clock) -> None:
    compat.create_entities(
        mem,
        [
            {"name": "person", "entityType": "concept", "observations": []},
            {"name": "Ada", "entityType": "person", "observations": ["likes tea"]},
        ],
    )
    clock.tick()
    assert (
        compat.create_entities(mem, [{"name": "ada", "entityType": "x", "observations": []}]) == []
    )
    mem.assert_fact("Ada", "entity_type", "robot")  # re-typed: covers "person", keeps it
    before = mem.now()
    clock.tick()
    assert compat.delete_entities(mem, ["person"]) == {"deleted": ["person"], "notFound": []}
    clock.tick()
    # Ada's old type names the deleted entity, but as a value, not a relation: untouched
    typed = mem.history("Ada", "entity_type")
    assert {f.object for f in typed} == {"person", "robot"}
    assert "retracted" not in {f.status for f in typed}
    assert compat.open_nodes(mem, ["Ada"])["entities"][0]["entityType"] == "robot"
    compat.add_observations(mem, [{"entityName": "Ada", "contents": ["drives"]}])
    clock.tick()
    compat.delete_entities(mem, ["Ada"])
    clock.tick()
    # retracting "robot" would bring "person" back; the delete goes on until nothing is left
    assert compat.read_graph(mem)["entities"] == []
    assert mem.facts("Ada") == []
    assert [f.object for f in mem.facts("Ada", "observation", known_at=before)] == ["likes tea"]
    with pytest.raises(NotFound, match="Entity with name Ada not found"):
        compat.add_observations(mem, [{"entityName": "Ada", "contents": ["x"]}])
    # a relation may name entities not in the graph (as in the official server): they are
    # created, untyped, and the caller is told
    created: list[str] = []
    rel = {"from": "Ada", "to": "Zed", "relationType": "knows"}
    assert compat.create_relations(mem, [rel], created=created) == [rel]
    assert created == ["Ada", "Zed"]
    clock.tick()
    assert compat.open_nodes(mem, ["Zed"])["entities"] == [
        {"name": "Zed", "entityType": "", "observations": []}
    ]
    # a relation named like the compat predicates stays a relation
    compat.create_entities(mem, [{"name": "Bo", "entityType": "person", "observations": ["x"]}])
    clock.tick()
    obs = {"from": "Bo", "to": "Bo", "relationType": "observation"}
    compat.create_relations(mem, [obs])
    clock.tick()
    assert compat.open_nodes(mem, ["Bo"]) == {
        "entities": [{"name": "Bo", "entityType": "person", "observations": ["x"]}],
        "relations": [obs],
    }


def test_observations_and_types_come_back_exactly_as_sent(mem: Memory, clock: Clock) -> None:
    long = "A long note.\n" * 2000  # 26 KB on 2,000 lines: far above the old 512 characters
    notes = ["vegetarian", "Vegetarian", "line one\n\tline  two", long]
    made = compat.create_entities(
        mem, [{"name": "Casey", "entityType": "Person", "observations": notes[:2]}]
    )
    assert made[0]["observations"] == notes[:2]
    clock.tick()
    added = compat.add_observations(mem, [{"entityName": "casey", "contents": notes}])
    assert added == [{"entityName": "casey", "addedObservations": notes[2:]}]
    clock.tick()
    node = compat.open_nodes(mem, ["Casey"])["entities"][0]
    assert (node["entityType"], sorted(node["observations"])) == ("Person", sorted(notes))
    # the engine keeps them too, and finds a value by exactly its text
    assert {f.object for f in mem.facts("Casey", "observation")} == set(notes)
    assert [f.object for f in mem.facts("Casey", "observation", "Vegetarian")] == ["Vegetarian"]
    assert compat.search_nodes(mem, "LINE  TWO")["entities"][0]["name"] == "Casey"
    # a case-variant delete removes only its own text
    gone = compat.delete_observations(
        mem, [{"entityName": "Casey", "observations": ["Vegetarian", long]}]
    )
    assert gone == {"deletedCount": 2, "missingEntities": []}
    clock.tick()
    left = compat.open_nodes(mem, ["Casey"])["entities"][0]["observations"]
    assert sorted(left) == sorted(notes[:1] + notes[2:3])
    # past the documented bound (64 KiB of UTF-8), a clear error and nothing stored
    with pytest.raises(ValidationError, match="65536 bytes"):
        compat.add_observations(mem, [{"entityName": "Casey", "contents": ["é" * 40_000]}])
    assert len(mem.facts("Casey", "observation")) == 2


def test_memory_json_round_trip(places: Places, mem: Memory, clock: Clock) -> None:
    lines = [
        '{"type":"entity","name":"Mira","entityType":"person","observations":["cellist","a"]}',
        "",
        '{"type":"entity","name":"Berlin","entityType":"city","observations":[]}',
        '{"type":"relation","from":"Mira","to":"Berlin","relationType":"lives_in"}',
        '{"type":"relation","from":"Mira","to":"Tokyo","relationType":"visited"}',
        '{"type":"relation","from":"Mira","to":"Berlin","relationType":"lives_in"}',
    ]
    counts = compat.import_memory_json(mem, lines)
    assert counts == {"entities": 2, "observations": 2, "relations": 2, "skipped": 1}
    clock.tick()
    out = [json.loads(line) for line in compat.export_memory_json(mem)]
    assert {"type": "entity", "name": "Tokyo", "entityType": "", "observations": []} in out
    assert {
        "type": "entity",
        "name": "Mira",
        "entityType": "person",
        "observations": ["a", "cellist"],
    } in out
    relations = [o for o in out if o["type"] == "relation"]
    assert len(relations) == 2 and len(out) == 5

    with Memory.open(places(), clock=clock, extractor=None, embedder=None) as other:
        compat.import_memory_json(other, compat.export_memory_json(mem))
        clock.tick()
        assert sorted(compat.export_memory_json(other)) == sorted(compat.export_memory_json(mem))
        again = compat.import_memory_json(other, compat.export_memory_json(mem))
        assert again == {"entities": 0, "observations": 0, "relations": 0, "skipped": 5}
        clock.tick()
        more = '{"type":"entity","name":"mira","entityType":"robot","observations":["b","a"]}'
        assert compat.import_memory_json(other, [more])["observations"] == 1
        clock.tick()
        (mira,) = compat.open_nodes(other, ["Mira"])["entities"]
        assert mira == {
            "name": "Mira",
            "entityType": "person",
            "observations": ["a", "cellist", "b"],
        }


def test_import_checks_every_line_before_writing(mem: Memory) -> None:
    good = '{"type":"entity","name":"Mira","entityType":"person","observations":[]}'
    for bad in ("not json", '{"type":"node"}', '{"type":"relation","from":"a","to":"b"}'):
        with pytest.raises(ValidationError, match="line 2"):
            compat.import_memory_json(mem, [good, bad])
    assert list(compat.export_memory_json(mem)) == []


def test_the_stdio_protocol_answers_what_a_client_may_ask() -> None:
    """`protocol.run_stdio` (the official client drives it in the tests above): one JSON
    message a line; pings, unknown methods, notifications, bad lines and bad arguments."""
    tools = Tools()

    @tools.tool()
    def echo(text: str, times: int = 1) -> Result:
        """Say it back"""
        return Result(text * times, {"text": text * times})

    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "ab", "times": 2}},
        },
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"times": "many"}},
        },
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "nope"}},
        {"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel"},
        {"jsonrpc": "2.0", "id": 8, "method": "resources/list"},
    ]
    src = io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in lines) + b"{oops\n")
    out = io.BytesIO()
    run_stdio(tools, name="p", version="9", instructions="hi", stdin=src, stdout=out)
    got = {r.get("id"): r for r in map(json.loads, out.getvalue().splitlines())}
    assert sorted(got, key=str) == sorted([1, 2, 3, 4, 5, 6, 7, 8, None], key=str)
    init = got[1]["result"]
    assert init["protocolVersion"] == "2025-11-25" and init["serverInfo"]["version"] == "9"
    assert got[2]["result"] == {}
    (listed,) = got[3]["result"]["tools"]
    assert listed["inputSchema"]["required"] == ["text"] and listed["description"] == "Say it back"
    assert got[4]["result"]["structuredContent"] == {"text": "abab"}
    assert got[5]["result"]["isError"] and "text" in got[5]["result"]["content"][0]["text"]
    assert got[6]["result"]["content"][0]["text"] == "Unknown tool: nope"
    assert got[7]["error"]["code"] == -32601 and got[None]["error"]["code"] == -32700
    assert got[8]["result"] == {"resources": []}


def test_compat_writes_are_embedded_after_the_call_and_recalled(
    place: str | Path, clock: Clock
) -> None:
    """The compat tools write without waiting for the model: once the embedding worker
    has caught up, every name and statement they wrote has its vectors, and recall finds
    an observation by its meaning's words."""
    from palimpsest.recall import HashingEmbedder
    from palimpsest.recall._statements import statement_key

    with Memory.open(place, clock=clock, extractor=None, embedder=HashingEmbedder()) as m:
        compat.create_entities(
            m,
            [
                {"name": "Mira", "entityType": "person", "observations": ["plays the cello"]},
                {"name": "Acme", "entityType": "company", "observations": []},
            ],
        )
        compat.create_relations(m, [{"from": "Mira", "to": "Acme", "relationType": "works with"}])
        compat.add_observations(m, [{"entityName": "Acme", "contents": ["ships telescopes"]}])
        m._embed.drain()
        ids, _ = m._store.embeddings.names_of(m.namespace)
        named = {r["name"] for r in m._store.names.entities_by_ids(ids)}
        assert {"Mira", "Acme"} <= named
        keys = m._store.embeddings.statement_keys_of(m.namespace)
        ns = m.namespace
        for s, p, o in [
            ("Mira", "observation", "plays the cello"),
            ("Acme", "observation", "ships telescopes"),
            ("Mira", "entity_type", "person"),
            ("Mira", compat.relation_predicate_name("works with"), "Acme"),
        ]:
            assert statement_key(ns, s, p, o) in keys, (s, p, o)
        hits = m.recall("who ships telescopes?", min_score=0.0)
        assert any("telescopes" in h.text for h in hits)

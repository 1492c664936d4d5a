"""The official MCP "memory" server's knowledge graph, kept in a Palimpsest memory.

    >>> create_entities(mem, [{"name": "Mira", "entityType": "person",
    ...                        "observations": ["plays the cello"]},
    ...                       {"name": "Berlin", "entityType": "city", "observations": []}])
    >>> create_relations(mem, [{"from": "Mira", "to": "Berlin", "relationType": "lives_in"}])
    >>> read_graph(mem)["entities"][0]["observations"]
    ['plays the cello']

`@modelcontextprotocol/server-memory` keeps entities (name, entityType,
observations) and relations (from, to, relationType) in a JSON Lines file. Here
the same shapes are facts, so they gain valid and transaction time, history and
recall. The mapping (a contract: `palimpsest import --format mcp-memory` and the
MCP tools rely on it):

- an entity is a Palimpsest entity of that name; its entityType is the fact
  (name, `entity_type`, type), a `one`-valued predicate with value objects (the
  engine has no verb that sets `Entity.type`, so the type is knowledge like any
  other: re-typing supersedes, history keeps the old type);
- an observation is the fact (name, `observation`, text), a `many`-valued
  predicate with value objects;
- a relation {from, to, relationType} is the fact (from, relationType, to). A
  relationType the vocabulary knows (by name or alias) keeps its meaning and
  cardinality: "works at" is `works_at`, one employer at a time, so a newer one
  supersedes the older. Any other becomes a `many` predicate named after it in
  snake_case ("is friends with" -> `is_friends_with`);
- every delete is a retraction: gone from every view from now on, still in
  `history` and in views as known before. `erase` stays the privacy verb.

As in the official server, relations and observations need their entities in
the graph (`import_memory_json` creates missing relation ends). Reads are as of
now; `read_graph` and `search_nodes` are bounded (entities, relations, observations
per entity), count what they leave out, and read only their page: the store picks
and cuts it (`graph._transfer.GraphPages`), never a whole snapshot.
Differences a switcher may notice: names match case-insensitively (the engine's
entity keys fold case and spaces), relation types come back as predicate names,
observations are single lines of at most 512 characters (listed in recording
order, alphabetically within one call), and an entity exists while some fact
mentions it.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _names as names
from .errors import NotFound, UnknownPredicate, ValidationError

if TYPE_CHECKING:
    from .memory import Memory
    from .models import Fact

OBSERVATION = "observation"
ENTITY_TYPE = "entity_type"
DEFAULT_TYPE = "thing"
COMPAT_PREDICATES = frozenset({OBSERVATION, ENTITY_TYPE})
_REASON = "memory-compat: {}"
# read_graph/search_nodes bounds: a page must fit an agent's context
MAX_ENTITIES = 500
MAX_RELATIONS = 1000
MAX_OBSERVATIONS = 100
OBSERVATION_LIMIT = 20
_MAX_ROUNDS = 32  # a retraction restores what it covered; repeat until nothing is left


# --- pure helpers ---------------------------------------------------------------------------
def relation_predicate_name(relation_type: str) -> str:
    """A predicate name for a relationType the vocabulary does not know.

    >>> relation_predicate_name("is friends with")
    'is_friends_with'
    """
    if not isinstance(relation_type, str) or not relation_type.strip():
        raise ValidationError("relationType: a non-empty string", field="relationType")
    text = unicodedata.normalize("NFKC", relation_type).casefold().replace("'", "")
    key = re.sub(r"[^a-z0-9]+", "_", text).strip("_")[:64].rstrip("_")
    if not key:
        # nothing ASCII to keep: a stable name, so the same type maps to the same predicate
        return "rel_" + hashlib.sha1(relation_type.encode()).hexdigest()[:12]
    return key if key[0].isalpha() else ("r_" + key)[:64].rstrip("_")


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{field}: expected a string", field=field)
    return value


def _strings(value: object, field: str) -> list[str]:
    if not isinstance(value, list):
        raise ValidationError(f"{field}: expected a list of strings", field=field)
    return [_text(v, field) for v in value]


def _key(name: str) -> str:
    return names.entity_key(name)


def build_graph(facts: Iterable[Fact], kinds: Mapping[str, str]) -> dict[str, Any]:
    """Entities and relations (the official shapes) from believed facts.

    `kinds` maps a predicate name to its object kind ("entity" or "value"), for
    the type of an endpoint that has no `entity_type` fact. Entities keep their
    first appearance's order; observations their recording order
    (alphabetical within one call).
    """
    nodes: dict[str, dict[str, Any]] = {}
    typed: set[str] = set()
    relations: list[dict[str, str]] = []
    seen: set[tuple[str, str, str]] = set()

    def node(eid: str, name: str, kind: str = DEFAULT_TYPE) -> dict[str, Any]:
        found = nodes.get(eid)
        if found is None:
            found = nodes[eid] = {"name": name, "entityType": kind, "observations": []}
        return found

    # one call's facts share a recording time: text order keeps the output deterministic
    for f in sorted(facts, key=lambda f: (f.recorded_at, (f.object or "").casefold(), f.id)):
        subject = node(f.subject_id or f.subject, f.subject)
        if f.predicate == OBSERVATION:
            subject["observations"].append(f.object)
        elif f.predicate == ENTITY_TYPE:
            subject["entityType"] = f.object
            typed.add(f.subject_id or f.subject)
        elif f.object is not None:
            oid = f.object_id or f.object
            obj = node(
                oid, f.object, "value" if kinds.get(f.predicate) == "value" else DEFAULT_TYPE
            )
            triple = (subject["name"], obj["name"], f.predicate)
            if triple not in seen:
                seen.add(triple)
                relations.append({"from": triple[0], "to": triple[1], "relationType": triple[2]})
    return {"entities": list(nodes.values()), "relations": relations}


# --- operations on a Memory -----------------------------------------------------------------
def ensure_vocabulary(mem: Memory, *, namespace: str | None = None) -> None:
    """Define `observation` and `entity_type` unless they already mean what this module needs."""
    wanted = {OBSERVATION: "many", ENTITY_TYPE: "one"}
    for name, cardinality in wanted.items():
        try:
            p = mem.predicate(name, namespace=namespace)
            if p.name == name and p.cardinality == cardinality and p.object_kind == "value":
                continue
        except UnknownPredicate:
            pass
        mem.define_predicate(
            name,
            "one" if cardinality == "one" else "many",
            object_kind="value",
            namespace=namespace,
        )


def relation_predicate(mem: Memory, relation_type: str, *, namespace: str | None = None) -> str:
    """The predicate a relationType is stored under, defining it (`many`) when unknown."""
    text = _text(relation_type, "relationType")
    name = _known_predicate(mem, text, namespace)
    if name is None:
        name = mem.define_predicate(relation_predicate_name(text), "many", namespace=namespace).name
    if name in COMPAT_PREDICATES:
        # these carry observations and types; a relation stored there would become one
        raise ValidationError(f"relationType: {text[:64]!r} is reserved", field="relationType")
    return name


def _known_predicate(mem: Memory, relation_type: str, namespace: str | None) -> str | None:
    """Like `relation_predicate`, but never defines one (for deletes and lookups)."""
    for candidate in (relation_type, relation_predicate_name(relation_type)):
        try:
            return mem.predicate(candidate, namespace=namespace).name
        except (UnknownPredicate, ValidationError):
            continue
    return None


def _kinds(mem: Memory, namespace: str | None) -> dict[str, str]:
    return {p.name: p.object_kind for p in mem.predicates(namespace=namespace)}


def _believed(mem: Memory, namespace: str | None) -> list[Fact]:
    return mem.snapshot(namespace=namespace).facts


def _profile_facts(mem: Memory, name: str, namespace: str | None) -> list[Fact] | None:
    """The entity's own facts and the relations pointing at it; None when it is not in the graph."""
    try:
        profile = mem.entity(name, namespace=namespace)
    except NotFound:
        return None
    incoming = [f for f in profile.incoming if f.predicate not in COMPAT_PREDICATES]
    if not profile.outgoing and not incoming:
        return None
    return list(profile.outgoing) + incoming


def create_entities(
    mem: Memory, entities: Sequence[Mapping[str, Any]], *, namespace: str | None = None
) -> list[dict[str, Any]]:
    """Add entities not in the graph yet (by name); the ones added, as given."""
    ensure_vocabulary(mem, namespace=namespace)
    parsed = [_entity_item(e, i) for i, e in enumerate(entities)]
    new: list[dict[str, Any]] = []
    batch: set[str] = set()
    for e in parsed:
        key = _key(names.clean_name(e["name"], field="name"))
        if key in batch or _profile_facts(mem, e["name"], namespace) is not None:
            continue
        batch.add(key)
        new.append(e)
    mem.assert_many([t for e in new for t in _entity_triples(e)], namespace=namespace)
    return new


def _entity_item(raw: object, index: int) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"entity {index}: expected an object", index=index)
    obs = _strings(raw.get("observations", []), "observations")
    return {
        "name": names.clean_name(raw.get("name"), field="name"),
        "entityType": _text(raw.get("entityType", DEFAULT_TYPE), "entityType"),
        "observations": obs,
    }


def _entity_triples(e: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = e["entityType"].strip() or DEFAULT_TYPE  # an entity needs a fact to exist at all
    out = [{"subject": e["name"], "predicate": ENTITY_TYPE, "object": kind}]
    seen: set[str] = set()
    for o in e["observations"]:
        text = names.clean_name(o, field="observation")
        if _key(text) not in seen:
            seen.add(_key(text))
            out.append({"subject": e["name"], "predicate": OBSERVATION, "object": text})
    return out


def _relation_item(raw: object, index: int) -> tuple[str, str, str]:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"relation {index}: expected an object", index=index)
    return (
        names.clean_name(raw.get("from"), field="from"),
        names.clean_name(raw.get("to"), field="to"),
        _text(raw.get("relationType"), "relationType"),
    )


def create_relations(
    mem: Memory,
    relations: Sequence[Mapping[str, Any]],
    *,
    namespace: str | None = None,
) -> list[dict[str, str]]:
    """Add relations not in the graph yet; both ends must exist (as in the official server)."""
    parsed = [_relation_item(r, i) for i, r in enumerate(relations)]
    checked: set[str] = set()
    for src, dst, _ in parsed:
        for end in (src, dst):
            if _key(end) not in checked:
                if _profile_facts(mem, end, namespace) is None:
                    raise NotFound(f"Entity with name {end} not found", name=end[:80])
                checked.add(_key(end))
    items: list[dict[str, Any]] = []
    out: list[dict[str, str]] = []
    batch: set[tuple[str, str, str]] = set()
    preds: dict[str, str] = {}
    for src, dst, rtype in parsed:
        if rtype not in preds:
            preds[rtype] = relation_predicate(mem, rtype, namespace=namespace)
        pred = preds[rtype]
        triple = (_key(src), pred, _key(dst))
        if triple in batch or mem.facts(src, pred, dst, namespace=namespace):
            continue
        batch.add(triple)
        items.append({"subject": src, "predicate": pred, "object": dst})
        out.append({"from": src, "to": dst, "relationType": pred})
    mem.assert_many(items, namespace=namespace)
    return out


def add_observations(
    mem: Memory, observations: Sequence[Mapping[str, Any]], *, namespace: str | None = None
) -> list[dict[str, Any]]:
    """Add observations to existing entities; per entity, the ones that were new."""
    ensure_vocabulary(mem, namespace=namespace)
    parsed: list[tuple[str, list[str]]] = []
    for i, raw in enumerate(observations):
        if not isinstance(raw, Mapping):
            raise ValidationError(f"observation {i}: expected an object", index=i)
        name = names.clean_name(raw.get("entityName"), field="entityName")
        contents = [
            names.clean_name(c, field="contents") for c in _strings(raw.get("contents"), "contents")
        ]
        if _profile_facts(mem, name, namespace) is None:
            raise NotFound(f"Entity with name {name} not found", name=name[:80])
        parsed.append((name, contents))
    items: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for name, contents in parsed:
        have = {_key(f.object or "") for f in mem.facts(name, OBSERVATION, namespace=namespace)}
        added = []
        for text in contents:
            if _key(text) not in have:
                have.add(_key(text))
                added.append(text)
                items.append({"subject": name, "predicate": OBSERVATION, "object": text})
        results.append({"entityName": name, "addedObservations": added})
    mem.assert_many(items, namespace=namespace)
    return results


def _retract_until_gone(
    mem: Memory, find: Any, why: str, namespace: str | None
) -> int:  # find: () -> list[Fact]
    """Retract what `find` returns until it returns nothing; the count of first-round facts."""
    first = None
    for _ in range(_MAX_ROUNDS):
        found = find()
        if first is None:
            first = len({(f.subject_id, f.predicate, f.object_id) for f in found})
        if not found:
            break
        for f in {f.id: f for f in found}.values():
            mem.retract(f.id, reason=_REASON.format(why), namespace=namespace)
    return first or 0


def delete_entities(
    mem: Memory, entity_names: Sequence[str], *, namespace: str | None = None
) -> dict[str, list[str]]:
    """Retract every fact about each entity and every relation to it."""
    deleted: list[str] = []
    not_found: list[str] = []
    for raw in entity_names:
        name = _text(raw, "entityNames")
        if not name.strip() or _profile_facts(mem, name, namespace) is None:
            not_found.append(name)
            continue
        _retract_until_gone(
            mem,
            lambda n=name: _profile_facts(mem, n, namespace) or [],
            "delete_entities",
            namespace,
        )
        deleted.append(name)
    return {"deleted": deleted, "notFound": not_found}


def delete_observations(
    mem: Memory, deletions: Sequence[Mapping[str, Any]], *, namespace: str | None = None
) -> dict[str, Any]:
    """Retract the named observations; entities not in the graph are reported, not an error."""
    count = 0
    missing: list[str] = []
    for i, raw in enumerate(deletions):
        if not isinstance(raw, Mapping):
            raise ValidationError(f"deletion {i}: expected an object", index=i)
        name = _text(raw.get("entityName"), "entityName")
        wanted = {_key(o) for o in _strings(raw.get("observations"), "observations")}
        if not name.strip() or _profile_facts(mem, name, namespace) is None:
            missing.append(name)
            continue

        def find(n: str = name, w: set[str] = wanted) -> list[Fact]:
            facts = mem.facts(n, OBSERVATION, namespace=namespace)
            return [f for f in facts if _key(f.object or "") in w]

        count += _retract_until_gone(mem, find, "delete_observations", namespace)
    return {"deletedCount": count, "missingEntities": missing}


def delete_relations(
    mem: Memory, relations: Sequence[Mapping[str, Any]], *, namespace: str | None = None
) -> dict[str, int]:
    """Retract the named relations; ones that match nothing are counted out, not an error."""
    count = 0
    for i, raw in enumerate(relations):
        src, dst, rtype = _relation_item(raw, i)
        pred = _known_predicate(mem, rtype, namespace)
        if pred is None or pred in COMPAT_PREDICATES:
            continue

        def find(s: str = src, p: str = pred, d: str = dst) -> list[Fact]:
            return mem.facts(s, p, d, namespace=namespace)

        count += _retract_until_gone(mem, find, "delete_relations", namespace)
    return {"deletedCount": count}


def read_graph(
    mem: Memory,
    *,
    limit: int = 50,
    relation_limit: int = 100,
    offset: int = 0,
    observation_limit: int = OBSERVATION_LIMIT,
    namespace: str | None = None,
) -> dict[str, Any]:
    """The graph as of now, bounded: a page of entities (best connected first), the
    relations touching them, and counts of what was left out. Only the page is read."""
    return _page(mem, "", limit, relation_limit, offset, observation_limit, namespace)


def search_nodes(
    mem: Memory,
    query: str,
    *,
    limit: int = 50,
    relation_limit: int = 100,
    offset: int = 0,
    observation_limit: int = OBSERVATION_LIMIT,
    namespace: str | None = None,
) -> dict[str, Any]:
    """Entities whose name, type or an observation contains `query` (case-insensitive),
    and the relations touching them; bounded like `read_graph`."""
    needle = _text(query, "query").lower()  # empty: everything, as the official server
    return _page(mem, needle, limit, relation_limit, offset, observation_limit, namespace)


def _page(
    mem: Memory,
    needle: str,
    limit: int,
    relation_limit: int,
    offset: int,
    observation_limit: int,
    namespace: str | None,
) -> dict[str, Any]:
    """A page of the believed graph, chosen and cut by the store (see `GraphPages`)."""
    from .graph._transfer import GraphPages

    bounds = (
        ("limit", limit, 1, MAX_ENTITIES),
        ("relation_limit", relation_limit, 0, MAX_RELATIONS),
        ("offset", offset, 0, None),
        ("observation_limit", observation_limit, 0, MAX_OBSERVATIONS),
    )
    for field, value, low, high in bounds:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValidationError(f"{field}: an integer >= {low}", field=field)
        if high is not None and value > high:
            raise ValidationError(f"{field}: at most {high}", field=field)
    kinds = _kinds(mem, namespace)
    values = [p for p, k in kinds.items() if k == "value" and p not in COMPAT_PREDICATES]
    pages = GraphPages(mem._store, mem._ns(namespace), mem.now(), sorted(COMPAT_PREDICATES))
    rows, total, ends = pages.entities(
        needle=needle,
        type_predicate=ENTITY_TYPE,
        value_predicates=values,
        kinds=(DEFAULT_TYPE, "value"),
        offset=offset,
        limit=limit,
    )
    ids = [r["id"] for r in rows]
    types = pages.own_first(ids, ENTITY_TYPE) if ids else {}
    counts = pages.own_counts(ids, OBSERVATION) if ids else {}
    entities = [
        {
            "name": r["name"],
            "entityType": types.get(r["id"], r["kind"]),
            "observations": pages.own(r["id"], OBSERVATION, observation_limit)
            if counts.get(r["id"]) and observation_limit
            else [],
        }
        for r in rows
    ]
    found, touching = pages.relations(ids, relation_limit) if ids else ([], 0)
    relations = [{"from": r["src"], "to": r["dst"], "relationType": r["type"]} for r in found]
    # the whole graph's relations for read_graph; for a search, those touching the page
    of = touching if needle else ends // 2
    hidden = sum(counts.values()) - sum(len(e["observations"]) for e in entities)
    summary = (
        f"{len(entities)} of {total} entities (from {offset}), {len(relations)} of {of} relations"
    )
    if hidden:
        summary += f", {hidden} observations left out (open_nodes shows them all)"
    if total - len(entities) or of - len(relations):
        summary += "; narrow with search_nodes or open_nodes, or page with offset"
    return {
        "entities": entities,
        "relations": relations,
        "omitted": {
            "entities": total - len(entities),
            "relations": of - len(relations),
            "observations": hidden,
        },
        "summary": summary,
    }


def open_nodes(
    mem: Memory, entity_names: Sequence[str], *, namespace: str | None = None
) -> dict[str, Any]:
    """The named entities and every relation touching them (names not in the graph are skipped)."""
    kinds = _kinds(mem, namespace)
    facts: dict[str, Fact] = {}
    wanted: set[str] = set()
    for raw in entity_names:
        name = _text(raw, "names")
        found = _profile_facts(mem, name, namespace) if name.strip() else None
        if found is None:
            continue
        wanted.add(_key(name))
        facts.update((f.version_id or f.id, f) for f in found)
    graph = build_graph(facts.values(), kinds)
    return {
        "entities": [e for e in graph["entities"] if _key(e["name"]) in wanted],
        "relations": graph["relations"],
    }


# --- the official server's memory.json ------------------------------------------------------
def export_memory_json(mem: Memory, *, namespace: str | None = None) -> Iterator[str]:
    """The graph as of now as the official server's JSON Lines (one object per line, no newline).

    >>> with open("memory.json", "w") as f:
    ...     f.writelines(line + "\\n" for line in export_memory_json(mem))
    """
    graph = build_graph(_believed(mem, namespace), _kinds(mem, namespace))
    for e in graph["entities"]:
        yield _line({"type": "entity", **e})
    for r in graph["relations"]:
        yield _line({"type": "relation", **r})


def _line(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def import_memory_json(
    mem: Memory, lines: Iterable[str], *, namespace: str | None = None
) -> dict[str, int]:
    """Load the official server's memory.json (JSON Lines of entities and relations).

    >>> with open("memory.json") as f:
    ...     import_memory_json(mem, f)
    {'entities': 2, 'observations': 3, 'relations': 1, 'skipped': 0}

    Every line is checked before anything is written: a malformed one raises
    ValidationError naming its line number and nothing is stored. Entities and
    relations already in the graph are skipped (counted in `skipped`; an
    existing entity still gains the file's new observations); relation ends the
    file does not declare are created as untyped entities.
    """
    entities: list[dict[str, Any]] = []
    relations: list[tuple[str, str, str]] = []
    for number, raw in enumerate(lines, start=1):
        if not isinstance(raw, str):
            raise ValidationError(f"line {number}: expected text", line=number)
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            raise ValidationError(f"line {number}: not JSON", line=number) from None
        if not isinstance(obj, dict) or obj.get("type") not in ("entity", "relation"):
            raise ValidationError(
                f"line {number}: expected an object with type 'entity' or 'relation'", line=number
            )
        try:
            if obj["type"] == "entity":
                entities.append(_entity_item(obj, number))
            else:
                relations.append(_relation_item(obj, number))
        except ValidationError as err:
            raise ValidationError(f"line {number}: {err.message}", line=number) from None
    ensure_vocabulary(mem, namespace=namespace)
    skipped = 0
    merged: dict[str, dict[str, Any]] = {}
    for e in entities:  # a name listed twice: one entity, observations joined
        key = _key(e["name"])
        if key in merged:
            merged[key]["observations"] += e["observations"]
            skipped += 1
        else:
            merged[key] = {**e, "observations": list(e["observations"])}
    # one read of the graph instead of a lookup per line: files run to thousands of lines
    graph = build_graph(_believed(mem, namespace), _kinds(mem, namespace))
    present = {_key(e["name"]): e for e in graph["entities"]}
    new = 0
    triples: list[dict[str, Any]] = []
    for e in merged.values():
        have = present.get(_key(e["name"]))
        if have is None:
            new += 1
            triples += _entity_triples(e)
            continue
        skipped += 1  # already in the graph: its type stays, new observations join it
        known = {_key(o) for o in have["observations"]}
        triples += [t for t in _entity_triples(e)[1:] if _key(t["object"]) not in known]
    observations = len(triples) - new  # every new entity has one entity_type fact
    links = {(_key(r["from"]), r["relationType"], _key(r["to"])) for r in graph["relations"]}
    preds: dict[str, str] = {}
    for src, dst, rtype in relations:
        if rtype not in preds:
            preds[rtype] = relation_predicate(mem, rtype, namespace=namespace)
        link = (_key(src), preds[rtype], _key(dst))
        if link in links:
            skipped += 1
            continue
        links.add(link)
        triples.append({"subject": src, "predicate": preds[rtype], "object": dst})
    mem.assert_many(triples, namespace=namespace)  # one transaction: all of it or nothing
    return {
        "entities": new,
        "observations": observations,
        "relations": len(triples) - new - observations,
        "skipped": skipped,
    }

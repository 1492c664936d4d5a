"""The official MCP "memory" server's knowledge graph as facts: the mapping and the writes.

    >>> create_entities(mem, [{"name": "Mira", "entityType": "person",
    ...                        "observations": ["plays the cello"]}])
    >>> create_relations(mem, [{"from": "Mira", "to": "Berlin", "relationType": "lives_in"}])

The mapping (entity types, observations and relations as facts; deletes as
retractions) is the contract `memory_compat` states; reads are `memory_reads`,
the memory.json file `memory_json`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import _names as names
from ..errors import NotFound, UnknownPredicate, ValidationError

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Fact

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

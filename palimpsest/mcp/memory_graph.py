"""The official MCP "memory" server's knowledge graph as facts: the mapping and the writes.

    >>> create_entities(mem, [{"name": "Mira", "entityType": "person",
    ...                        "observations": ["plays the cello"]}])
    >>> create_relations(mem, [{"from": "Mira", "to": "Berlin", "relationType": "lives_in"}])

The mapping (entity types, observations and relations as facts; deletes as
retractions) is the contract `memory_compat` states; reads are `memory_reads`,
the memory.json file `memory_json`.
"""

from __future__ import annotations

import base64
import json
import re
import time
import weakref
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
EMPTY_TYPE = "\u2205"  # stands for entityType "": an entity needs a fact to exist
UNTYPED = ""  # the entityType of a relation end never created as an entity
_PLAIN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_CODED = "rt_"
_MAX_TYPE_BYTES = 38
COMPAT_PREDICATES = frozenset({OBSERVATION, ENTITY_TYPE})
_REASON = "memory-compat: {}"
# read_graph/search_nodes return the whole graph up to these bounds (the official
# server returns all of it); beyond them they page and say what they left out
MAX_ENTITIES = 10_000
MAX_RELATIONS = 50_000
MAX_OBSERVATIONS = 1_000
OBSERVATION_LIMIT = MAX_OBSERVATIONS
_MAX_ROUNDS = 32  # a retraction restores what it covered; repeat until nothing is left


# --- pure helpers ---------------------------------------------------------------------------
def relation_predicate_name(relation_type: str, *, plain: bool = True) -> str:
    """The predicate a relationType is stored under, from which its exact text comes back.

    >>> relation_predicate_name("knows")
    'knows'
    >>> relation_predicate_name("is friends with")
    'rt_nfzsaztsnfsw4zdteb3ws5di'
    >>> relation_type(relation_predicate_name("住んでいる"))
    '住んでいる'

    A snake_case type is its own name (`plain`); any other is its UTF-8 in base32
    behind `rt_`, so case, spaces and script survive (at most 38 bytes: a predicate
    name has 64 characters).
    """
    text = _text(relation_type, "relationType")
    if not text.strip():
        raise ValidationError("relationType: a non-empty string", field="relationType")
    if plain and _PLAIN.match(text) and not text.startswith(_CODED):
        return text
    code = base64.b32encode(text.encode()).decode().lower().rstrip("=")
    if len(_CODED) + len(code) > 64:
        raise ValidationError(
            f"relationType: {text[:40]!r}...: at most {_MAX_TYPE_BYTES} bytes of UTF-8",
            field="relationType",
        )
    return _CODED + code


def relation_type(predicate: str) -> str:
    """The relationType a predicate name stands for (its own name unless `rt_`-coded)."""
    if predicate.startswith(_CODED):
        code = predicate[len(_CODED) :].upper()
        try:
            return base64.b32decode(code + "=" * (-len(code) % 8)).decode()
        except (ValueError, UnicodeDecodeError):
            pass
    return predicate


def entity_type(stored: str) -> str:
    """The entityType a stored `entity_type` object stands for ("" for the empty type)."""
    return "" if stored == EMPTY_TYPE else stored


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

    def node(eid: str, name: str, kind: str = UNTYPED) -> dict[str, Any]:
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
            subject["entityType"] = entity_type(f.object or "")
            typed.add(f.subject_id or f.subject)
        elif f.object is not None:
            oid = f.object_id or f.object
            obj = node(oid, f.object, "value" if kinds.get(f.predicate) == "value" else UNTYPED)
            triple = (subject["name"], obj["name"], relation_type(f.predicate))
            if triple not in seen:
                seen.add(triple)
                relations.append({"from": triple[0], "to": triple[1], "relationType": triple[2]})
    return {"entities": list(nodes.values()), "relations": relations}


# --- operations on a Memory -----------------------------------------------------------------
# Predicates found (or made) to mean what this module needs, per memory and namespace:
# through an owner each look is a round trip, and a write would otherwise make up to a
# dozen of them before its own. A predicate is never deleted and only a deliberate
# redefinition (or a restore) changes its meaning: a check holds for `_RECHECK_S`.
_RECHECK_S = 30.0
_CHECKED: weakref.WeakKeyDictionary[Any, dict[str | None, tuple[float, dict[str, str]]]] = (
    weakref.WeakKeyDictionary()
)


def _checked(mem: Memory, namespace: str | None) -> dict[str, str]:
    """This memory's checked predicates in the namespace: {wanted: predicate name}."""
    ns = namespace if namespace is not None else getattr(mem, "namespace", None)
    now = time.monotonic()
    try:
        held = _CHECKED.setdefault(mem, {})
    except TypeError:  # not weakly referable: no memo
        return {}
    at, known = held.get(ns, (now, {}))
    if now - at > _RECHECK_S:
        at, known = now, {}
    held[ns] = (at, known)
    return known


def ensure_vocabulary(mem: Memory, *, namespace: str | None = None) -> None:
    """Define `observation` and `entity_type` unless they already mean what this module needs."""
    known = _checked(mem, namespace)
    if OBSERVATION in known and ENTITY_TYPE in known:
        return
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
    known.update({OBSERVATION: OBSERVATION, ENTITY_TYPE: ENTITY_TYPE})


def relation_predicate(mem: Memory, relation_type: str, *, namespace: str | None = None) -> str:
    """The predicate a relationType is stored under, defined (`many`) on first use.

    Relations are additive, as in the official server: every type is a `many`
    predicate of its own. A snake_case type the vocabulary already gives another
    meaning (`works_at`: one employer at a time) is coded like any other type,
    so the engine's own predicate keeps its cardinality.
    """
    known = _checked(mem, namespace)
    key = "relationType\x1f" + relation_type
    if key in known:
        return known[key]
    name = relation_predicate_name(relation_type)
    if name == relation_type and not _ours(mem, name, namespace, plain=True):
        name = relation_predicate_name(relation_type, plain=False)
    if not _ours(mem, name, namespace):
        mem.define_predicate(name, "many", namespace=namespace)
    known[key] = name
    return name


def _ours(mem: Memory, name: str, namespace: str | None, *, plain: bool = False) -> bool:
    """Is `name` a predicate a relation may use (exactly that name, `many`, entity objects)?
    With `plain`, a name no predicate has yet counts too."""
    try:
        p = mem.predicate(name, namespace=namespace)
    except UnknownPredicate:
        return plain and name not in COMPAT_PREDICATES
    return (
        p.name == name
        and p.cardinality == "many"
        and p.object_kind == "entity"
        and name not in COMPAT_PREDICATES
    )


def _known_predicates(mem: Memory, relation_type: str, namespace: str | None) -> list[str]:
    """The predicates a relationType may be stored under (for deletes); never defines one."""
    out: list[str] = []
    for plain in (True, False):
        try:
            name = relation_predicate_name(relation_type, plain=plain)
            p = mem.predicate(name, namespace=namespace)
        except (UnknownPredicate, ValidationError):
            continue
        if p.name == name and name not in COMPAT_PREDICATES and name not in out:
            out.append(name)
    return out


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


def entity_ids(
    mem: Memory, raw_names: Iterable[str], namespace: str | None
) -> dict[str, tuple[str, str]]:
    """{name key: (entity id, display name)} for the names that name an entity."""
    return mem.entity_ids(raw_names, namespace=namespace)


def _typed(mem: Memory, ids: Iterable[str], namespace: str | None) -> set[str]:
    """The entities (by id) that have a type: the ones in the graph, in the official sense."""
    return {r["s"] for r in own_facts(mem, ids, [ENTITY_TYPE], namespace)}


def own_facts(
    mem: Memory, ids: Iterable[str], predicates: Sequence[str], namespace: str | None
) -> list[dict[str, Any]]:
    """Believed facts about the entities, of these predicates: {s, p, o, obj} (the
    engine's point query for each entity and predicate, in one read)."""
    ids = list(ids)
    if not ids:  # names all new: nothing to ask the memory
        return []
    return [
        {"s": f.subject_id, "p": f.predicate, "o": f.object_id, "obj": f.object}
        for f in mem.facts_of(ids, predicates, namespace=namespace)
    ]


def _write(mem: Memory, items: Sequence[Mapping[str, Any]], namespace: str | None) -> None:
    """`assert_many` the items, in one transaction, without their records: the
    compat tools answer with what they were sent, and through an owner the records
    of a batch (~500 bytes a fact) would be encoded, sent and validated for nothing.
    `import_facts` takes the same items (as JSON lines) and answers with a count."""
    if items:
        lines = [json.dumps(i, ensure_ascii=False) for i in items]
        mem.import_facts(lines, batch=max(len(lines), 1), namespace=namespace)


def create_entities(
    mem: Memory, entities: Sequence[Mapping[str, Any]], *, namespace: str | None = None
) -> list[dict[str, Any]]:
    """Add entities not in the graph yet (by name); the ones added, as given.

    An entity is in the graph once it has a type: a name that so far only ends a
    relation (or that the engine's own tools wrote about) is created here.
    """
    ensure_vocabulary(mem, namespace=namespace)
    parsed = [_entity_item(e, i) for i, e in enumerate(entities)]
    ids = entity_ids(mem, [e["name"] for e in parsed], namespace)
    typed = _typed(mem, (i for i, _ in ids.values()), namespace)
    new: list[dict[str, Any]] = []
    batch: set[str] = set()
    for e in parsed:
        key = _key(e["name"])
        if key in batch or (key in ids and ids[key][0] in typed):
            continue
        batch.add(key)
        new.append(e)
    _write(mem, [t for e in new for t in _entity_triples(e)], namespace)
    return new


def _entity_item(raw: object, index: int) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"entity {index}: expected an object", index=index)
    obs = [
        names.clean_value(o, field="observations")
        for o in _strings(raw.get("observations", []), "observations")
    ]
    return {
        "name": names.clean_name(raw.get("name"), field="name"),
        "entityType": _text(raw.get("entityType", ""), "entityType"),
        "observations": obs,
    }


def _entity_triples(e: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = e["entityType"] if e["entityType"].strip() else EMPTY_TYPE  # a fact to exist
    out = [{"subject": e["name"], "predicate": ENTITY_TYPE, "object": kind}]
    for text in dict.fromkeys(e["observations"]):  # exact text: case and lines kept
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
    created: list[str] | None = None,
) -> list[dict[str, str]]:
    """Add relations not in the graph yet, their types as sent. An end that is not an
    entity of the graph yet is accepted, as the official server does, and becomes an
    untyped entity (its name appended to `created`)."""
    parsed = [_relation_item(r, i) for i, r in enumerate(relations)]
    preds: dict[str, str] = {}
    for _, _, rtype in parsed:
        if rtype not in preds:
            preds[rtype] = relation_predicate(mem, rtype, namespace=namespace)
    pairs = entity_ids(mem, [n for s, d, _ in parsed for n in (s, d)], namespace)
    ids = {k: v[0] for k, v in pairs.items()}
    # one read: the relations already there, and which ends have a type
    rows = own_facts(mem, ids.values(), [*dict.fromkeys(preds.values()), ENTITY_TYPE], namespace)
    have = {(r["s"], r["p"], r["o"]) for r in rows}
    typed = {r["s"] for r in rows if r["p"] == ENTITY_TYPE}
    items: list[dict[str, Any]] = []
    out: list[dict[str, str]] = []
    batch: set[tuple[str, str, str]] = set()
    ends: dict[str, str] = {}
    for src, dst, rtype in parsed:
        pred = preds[rtype]
        triple = (_key(src), pred, _key(dst))
        sid, oid = ids.get(triple[0]), ids.get(triple[2])
        if triple in batch or (sid and oid and (sid, pred, oid) in have):
            continue
        batch.add(triple)
        ends.setdefault(triple[0], src)
        ends.setdefault(triple[2], dst)
        items.append({"subject": src, "predicate": pred, "object": dst})
        out.append({"from": src, "to": dst, "relationType": rtype})
    if created is not None:
        created += [n for k, n in ends.items() if ids.get(k) not in typed]
    _write(mem, items, namespace)
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
            names.clean_value(c, field="contents")
            for c in _strings(raw.get("contents"), "contents")
        ]
        parsed.append((name, contents))
    ids = {k: v[0] for k, v in entity_ids(mem, [n for n, _ in parsed], namespace).items()}
    rows = own_facts(mem, ids.values(), [OBSERVATION, ENTITY_TYPE], namespace)
    have: dict[str, set[str]] = {}
    for r in rows:
        if r["p"] == OBSERVATION:
            have.setdefault(r["s"], set()).add(r["obj"] or "")
    known = {r["s"] for r in rows}  # typed or observed: in the graph
    for name, _ in parsed:
        eid = ids.get(_key(name))
        if eid is None or (eid not in known and _profile_facts(mem, name, namespace) is None):
            raise NotFound(f"Entity with name {name} not found", name=name[:80])
    items: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for name, contents in parsed:
        known = have.setdefault(ids[_key(name)], set())
        added = []
        for text in contents:
            if text not in known:
                known.add(text)
                added.append(text)
                items.append({"subject": name, "predicate": OBSERVATION, "object": text})
        results.append({"entityName": name, "addedObservations": added})
    _write(mem, items, namespace)
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
        wanted = set(_strings(raw.get("observations"), "observations"))
        if not name.strip() or _profile_facts(mem, name, namespace) is None:
            missing.append(name)
            continue

        def find(n: str = name, w: set[str] = wanted) -> list[Fact]:
            facts = mem.facts(n, OBSERVATION, namespace=namespace)
            return [f for f in facts if (f.object or "") in w]

        count += _retract_until_gone(mem, find, "delete_observations", namespace)
    return {"deletedCount": count, "missingEntities": missing}


def delete_relations(
    mem: Memory, relations: Sequence[Mapping[str, Any]], *, namespace: str | None = None
) -> dict[str, int]:
    """Retract the named relations; ones that match nothing are counted out, not an error."""
    count = 0
    for i, raw in enumerate(relations):
        src, dst, rtype = _relation_item(raw, i)
        for pred in _known_predicates(mem, rtype, namespace):

            def find(s: str = src, p: str = pred, d: str = dst) -> list[Fact]:
                return mem.facts(s, p, d, namespace=namespace)

            count += _retract_until_gone(mem, find, "delete_relations", namespace)
    return {"deletedCount": count}

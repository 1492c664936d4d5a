"""Word lists for documents: roles, headings, and how each predicate keeps time.

>>> heading_predicate("Managers", person=False), heading_predicate("Home arenas", person=False)
('led_by', 'home_venue')

``ONE_PREDICATES`` must agree with the ``"one"`` entries of
``palimpsest/data/predicates.json`` (a test checks it): the extractor closes a
document's open-ended value of such a predicate where the next one starts.
"""

from __future__ import annotations

__all__ = [
    "EVENT_PREDICATES",
    "LEADER_ROLES",
    "ONE_PREDICATES",
    "heading_predicate",
]

ONE_PREDICATES = frozenset(
    {
        "lives_in", "works_at", "job_title", "studies_at", "born_in", "birthday", "age",
        "spouse", "partner", "plays_for", "coaches", "position_held", "political_party",
        "led_by", "owned_by", "resident", "located_in", "official_name", "home_venue",
        "detained_in", "headquarters", "capital", "league", "made_by", "operated_by",
        "broadcaster", "served_in", "competes_in", "publisher", "record_label",
    }
)  # fmt: skip
# Dated once, not a state: "received the award in 2010" holds over 2010 only.
EVENT_PREDICATES = frozenset({"received", "won", "attended", "visited", "made"})

# Who heads something: "X was appointed manager of the club" -> (club, led_by, X).
LEADER_ROLES = {
    "manager", "coach", "chairman", "chairwoman", "chairperson", "chair", "president",
    "rector", "director", "head", "chief", "ceo", "commissioner", "commander",
    "mayor", "governor", "leader", "editor", "secretary", "master", "principal",
    "dean", "chancellor", "officeholder", "holder", "captain", "presenter", "host",
    "bishop", "archbishop", "minister", "premier", "chief executive", "emir", "king",
    "queen", "monarch", "ruler", "sultan", "prince", "duke", "owner", "proprietor",
    "conductor", "superintendent", "warden", "provost", "abbot", "prior", "pastor",
    "vicar", "rabbi", "imam", "headmaster", "headmistress", "executive", "boss",
    "administrator", "curator", "publisher", "treasurer", "speaker", "chairmen",
    "trainer", "skipper", "commanding officer", "officer", "general", "admiral",
}  # fmt: skip
_HEADINGS: list[tuple[frozenset[str], str]] = [
    (
        frozenset({"arena", "arenas", "stadium", "stadiums", "venue", "venues", "ground"}),
        "home_venue",
    ),
    (frozenset({"resident", "residents", "occupant", "occupants", "residence"}), "resident"),
    (frozenset({"owner", "owners", "ownership", "proprietors"}), "owned_by"),
    (frozenset({"award", "awards", "honour", "honours", "honor", "honors", "prizes"}), "received"),
    (frozenset({"club", "clubs", "team", "teams"}), "plays_for"),
    (frozenset({"name", "names"}), "official_name"),
    (frozenset({"capital", "capitals", "seat"}), "capital"),
    (frozenset({"league", "leagues", "division"}), "league"),
]


def heading_predicate(heading: str, *, person: bool) -> str:
    """The predicate of the dated items listed under ``heading``.

    A list of people under a heading naming a role ("Managers", "List of CEOs",
    "Commanding officers of the regiment") holds the topic's heads; other
    headings name what they list; the rest are items of the topic's timeline.
    """
    words = {w.strip(".,:;()").casefold() for w in heading.split()}
    for keys, predicate in _HEADINGS:
        if words & keys:
            return predicate
    stems = {w[:-1] if w.endswith("s") else w for w in words} | words
    stems |= {w[:-2] + "an" if w.endswith("men") else w for w in words}
    if stems & LEADER_ROLES or any(w.endswith(("ors", "ers", "ents")) for w in words):
        return "led_by"
    if person and words & {"career", "playing", "senior", "youth", "international"}:
        return "plays_for"
    return "timeline"

"""Who a clause is about: the speaker, a name, "my sister", "my job", a pet's name.

>>> _subject(ctx, list(nlp("My sister Mira lives in Berlin."))).name   # doctest: +SKIP
'Mira'
"""

from __future__ import annotations

from ._coref import pick
from ._lexicon import ATTRIBUTES, KIN, OTHER_KIN, PETS, VERB_FORMS
from ._tokens import (
    _BAD_SUBJECT_LABELS,
    _DISCOURSE,
    _TITLES,
    Token,
    _Ctx,
    _ent,
    _is_loose_name,
    _is_name_token,
    _kin_head,
    _lw,
    _name_span,
    _noun_group,
    _owner_of,
    _Subject,
    _text,
)


def _subject(ctx: _Ctx, toks: list[Token]) -> _Subject | None:
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i]
        lw = _lw(t)
        if t.i in ctx.masked or t.is_punct or t.pos_ in ("INTJ", "CCONJ") or lw in _DISCOURSE:
            i += 1
            continue
        if lw in _LEAD_ADVERBS and i + 1 < n and _lw(toks[i + 1]) in ("i", "we"):
            i += 1  # "Just yesterday I joined a church", "Recently I started ..."
            continue
        if t.pos_ == "ADV" and lw.endswith("ly") and i + 1 < n and _lw(toks[i + 1]) in (",", "i"):
            i += 1  # "Unfortunately, I also lost my job"
            continue
        break
    if i >= n:
        return None
    t = toks[i]
    lw = _lw(t)
    topic = ctx.topic
    if topic is not None:
        about = _topic_subject(ctx, toks, i)
        if about is not None:
            return about
        if lw in ("i", "we", "you"):
            return None  # in a document, first and second person are quotations
    if lw in ("i", "we"):
        return _Subject(ctx.speaker, "speaker", i + 1)
    if _elided(ctx, toks, i):
        return _Subject(ctx.speaker, "speaker", i)
    if lw == "you":
        return _Subject(ctx.addressee, "person", i + 1) if ctx.addressee else None
    if lw in ("he", "she", "they"):
        if ctx.last_person and ctx.last_pronoun in (lw, None):
            return _Subject(ctx.last_person, "person", i + 1)
        # no one of that kind named in this turn: the last one named before it
        name = pick(ctx.people, lw, exclude=(ctx.speaker, ctx.addressee))
        return _Subject(name, "person", i + 1) if name else None
    if lw == "the" and i + 1 < n and _lw(toks[i + 1]) == "user":
        # tools, documents and other agents speak of the memory's owner as "the user"
        return _Subject("user", "person", i + 2)
    if (
        lw in ("his", "her", "its", "their")
        and ctx.pending is not None
        and i + 1 < n
        and _lw(toks[i + 1]) == "name"
    ):
        # "I got a kitten, her name is Mochi": the name belongs to the pending pet.
        powner, prel = ctx.pending
        return _Subject(None, "kinname", i + 2, owner=powner, rel=prel)
    if lw in ("my", "our", "his", "her", "their", "your"):
        owner = _owner_of(ctx, lw)
        if owner is None:
            return None
        group, j = _noun_group(toks, i + 1)
        if not group:
            return None
        words = [_lw(g) for g in group]
        phrase = " ".join(words)
        head, rel, is_ex = _kin_head(group)
        if len(words) > 1 and " ".join(words[-2:]) in ATTRIBUTES:
            # "my mother tongue" is an attribute, not my mother.
            head, rel = "", None
        if phrase in ("family", "household") or words[-1] in ("family", "household"):
            return _Subject(owner, "speaker" if owner == ctx.speaker else "person", j)
        if head and (head in KIN or head in PETS or head in OTHER_KIN or rel == "pet"):
            k = j + 1 if j < n and _lw(toks[j]) == "," else j
            end = _name_span(toks, k, loose=True)
            if end > k:
                name = _text(toks[k:end])
                via = (owner, rel) if rel and not is_ex else None
                end = end + 1 if end < n and _lw(toks[end]) == "," else end
                return _Subject(name, "person", end, owner=owner, rel=rel, via=via)
            if j + 1 < n and _lw(toks[j]) in ("'s", "’s") and _lw(toks[j + 1]) == "name":
                return _Subject(None, "kinname", j + 2, owner=owner, rel=rel, noun=head)
            if is_ex:
                return None
            label = f"{owner}'s {_text(group)}"
            return _Subject(label, "kin", j, owner=owner, rel=rel, noun=head)
        attr = _attribute(words)
        if attr is not None:
            return _Subject(None, "attr", j, owner=owner, rel=attr, noun=phrase)
        return None
    loose_start = (
        _loose_subject(ctx, t)
        and i + 1 < n
        and (
            toks[i + 1].pos_ in ("VERB", "AUX")
            or _lw(toks[i + 1]) in VERB_FORMS
            or _lw(toks[i + 1]) in ("'s", "’s", "and")
            or _is_loose_name(toks[i + 1])
        )
    )
    if (
        _is_name_token(t)
        or loose_start
        or (lw in _TITLES and i + 1 < n and _is_name_token(toks[i + 1]))
    ):
        end = _name_span(toks, i, loose=True)
        if end == i:
            return None
        if end == i + 1 and t.is_sent_start and t.text not in ctx.names and _common_word(ctx, t):
            # "Stuff like this mural ...", "Themes like love ...": the tagger's capital
            plural = str(t.lemma_).lower() != _lw(t)
            if plural or (end < n and _lw(toks[end]) in ("like", "such")):
                return None
        span = toks[i:end]
        labels = {_ent(s) for s in span} - {""}
        if labels & _BAD_SUBJECT_LABELS and "PERSON" not in labels:
            return None
        name = _text(span)
        if end + 1 < n and _lw(toks[end]) == "and" and _lw(toks[end + 1]) == "i":
            return _Subject(ctx.speaker, "speaker", end + 2, co=name)
        if end < n and _lw(toks[end]) in ("'s", "’s"):
            group, j = _noun_group(toks, end + 1)
            if group:
                words = [_lw(g) for g in group]
                head, rel, is_ex = _kin_head(group)
                if rel is not None and not is_ex:
                    k = j + 1 if j < n and _lw(toks[j]) == "," else j
                    nend = _name_span(toks, k)
                    if nend > k:
                        return _Subject(
                            _text(toks[k:nend]),
                            "person",
                            nend,
                            owner=name,
                            rel=rel,
                            via=(name, rel),
                        )
                    if j < n and _lw(toks[j]) in ("'s", "’s"):
                        return _Subject(None, "kinname", j + 2, owner=name, rel=rel)
                    return _Subject(
                        f"{name}'s {_text(group)}", "kin", j, owner=name, rel=rel, noun=head
                    )
                attr = _attribute(words)
                if attr is not None:
                    return _Subject(None, "attr", j, owner=name, rel=attr, noun=" ".join(words))
            return None
        return _Subject(name, "person", end)
    if t.pos_ == "NOUN" and t.tag_ in ("NNS", "NN") and i + 1 < n and toks[i + 1].pos_ == "AUX":
        return _Subject(t.text, "plain", i + 1)
    return None


_LEAD_ADVERBS = {"just", "recently", "finally", "lately", "eventually", "luckily", "today"}
# Past forms that open a chat sentence without its "I" ("Lost my job yesterday",
# "Took a trip", "Been living here for years"); "was"/"were" elide "it", not "I".
_NOT_ELIDED = {
    "was", "were", "did", "had", "seemed", "sounded", "looked", "felt", "made",
    "are", "am", "is", "been", "thought", "meant", "said", "told", "heard",
}  # fmt: skip


def _past_form(ctx: _Ctx, lw: str) -> bool:
    lex = ctx.lexicon
    if lw.endswith("ing"):
        return False  # "winning" is in the exceptions too, and no past
    if lw in lex.irregular and not lw.endswith("s"):
        return lex.irregular[lw] != lw
    return lw.endswith("ed") and (lw[:-2] in lex.verbs or lw[:-1] in lex.verbs)


def _elided(ctx: _Ctx, toks: list[Token], i: int) -> bool:
    """A sentence whose first word is the speaker's past or ongoing verb, its "I" left
    out: "Lost my job yesterday", "Been living in Montreal", "Researching adoption
    agencies - it's been a dream". A gerund that is the subject of a verb of its
    own ("Learning German has been tough") is no such sentence."""
    j = i
    while j < len(toks) and _lw(toks[j]) in ("just", "finally", "also", "recently", "really"):
        j += 1
    if j + 1 >= len(toks) or not toks[i].is_sent_start:
        return False
    t, nxt = toks[j], toks[j + 1]
    lw = _lw(t)
    if lw == "been":
        return nxt.tag_ == "VBG" or nxt.pos_ in ("ADV", "ADJ")
    if nxt.pos_ not in ("DET", "PRON", "ADP", "NUM", "ADJ", "NOUN", "PROPN", "PART", "ADV"):
        return False
    if _lw(nxt) in ("you", "it", "that", "this", "he", "she", "they", "we", "i"):
        return False  # "Made it!", "Got you": the object is the point, or "it" was the subject
    if lw not in _NOT_ELIDED and _past_form(ctx, lw):
        return True
    if t.tag_ == "VBG" and t.pos_ == "VERB":
        if t.dep_ in ("csubj", "csubjpass", "nsubj") or _evaluated(t):
            return False  # "Winning a title ... is inspiring": the gerund is the subject
        for x in toks[j + 1 :]:
            if x.is_punct and _lw(x) not in ("'s", "-"):
                return True  # the gerund's phrase ends before any verb of its own
            if x.tag_ in ("VBZ", "VBP", "VBD", "MD"):
                return False
        return True
    return False


def _topic_subject(ctx: _Ctx, toks: list[Token], i: int) -> _Subject | None:
    """In a document: "he", "it", "the house", "Smith" for the page's topic."""
    topic = ctx.topic
    assert topic is not None
    t = toks[i]
    lw = _lw(t)
    if lw == topic.pronoun or (lw == "they" and topic.pronoun == "it"):
        return _Subject(topic.name, "person", i + 1)
    if lw == "the" and i + 1 < len(toks):
        j = i + 1
        while j < len(toks) and toks[j].pos_ == "ADJ" and j < i + 3:
            j += 1
        if j < len(toks) and _lw(toks[j]) in topic.heads and toks[j].pos_ == "NOUN":
            return _Subject(topic.name, "person", j + 1)
    end = _name_span(toks, i, loose=True)
    if end > i and topic.refers(_text(toks[i:end])):
        return _Subject(topic.name, "person", end)
    return None


def _evaluated(t: Token) -> bool:
    """'Making videos and connecting with people - that's awesome!': a gerund phrase
    the sentence then judges ("that's", "it's", "is") is a topic, not a deed."""
    after = [u for u in t.sent if u.i > t.i]
    for k, u in enumerate(after):
        if u.text in ("-", "–", "—") and k + 1 < len(after):
            return _lw(after[k + 1]) in ("that", "this", "what")
    return False


def _loose_subject(ctx: _Ctx, t: Token) -> bool:
    """A capitalised word that may start a clause as a name the tagger missed.

    A verb form ("Sounds like fun") or an unlabelled common noun ("Flowers bring
    joy", "Stuff like this") is no name unless this conversation already knows it.
    """
    if not _is_loose_name(t):
        return False
    if t.text in ctx.names:
        return True
    if t.pos_ in ("VERB", "AUX"):
        return False
    return not _common_word(ctx, t) or t.pos_ != "NOUN"


def _common_word(ctx: _Ctx, t: Token) -> bool:
    """An unlabelled word of the common vocabulary ("Music", "Themes", "Stuff")."""
    nouns = ctx.lexicon.nouns
    return not t.ent_type_ and (_lw(t) in nouns or str(t.lemma_).lower() in nouns)


def _attribute(words: list[str]) -> str | None:
    phrase = " ".join(words)
    if words and words[0] in ("favorite", "favourite"):
        return "prefers"
    if phrase == "name":
        return "name"
    for size in (3, 2, 1):
        key = " ".join(words[-size:])
        if len(words) >= size and key in ATTRIBUTES:
            return ATTRIBUTES[key]
    return None

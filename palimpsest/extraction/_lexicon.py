"""Word lists the rules consult. Plain data, no logic.

>>> KIN["sister"]
'sibling'
"""

from __future__ import annotations

__all__ = [
    "ADJ_LANGUAGES",
    "ATTRIBUTES",
    "BOUNDARY_ADVERBS",
    "FALLBACK_BLOCKLIST",
    "JOB_NOUNS",
    "JOB_SUFFIXES",
    "KIN",
    "LANGUAGES",
    "NATIONALITIES",
    "NOT_JOBS",
    "NUMBER_WORDS",
    "OTHER_KIN",
    "OWNABLE",
    "PETS",
    "SCHOOL_WORDS",
    "SKIP_ADVERBS",
    "VERB_FORMS",
]

# Kinship and relationship nouns -> vocabulary predicate (from the speaker's side).
KIN: dict[str, str] = {
    "sister": "sibling", "brother": "sibling", "sibling": "sibling", "sis": "sibling",
    "bro": "sibling", "twin": "sibling",
    "mother": "parent", "mom": "parent", "mum": "parent", "mommy": "parent",
    "mama": "parent", "father": "parent", "dad": "parent", "daddy": "parent",
    "papa": "parent", "parent": "parent", "stepmother": "parent", "stepfather": "parent",
    "son": "child", "daughter": "child", "kid": "child", "child": "child",
    "stepson": "child", "stepdaughter": "child", "baby": "child",
    "wife": "spouse", "husband": "spouse", "spouse": "spouse",
    "boyfriend": "partner", "girlfriend": "partner", "partner": "partner",
    "fiance": "partner", "fiancé": "partner", "fiancee": "partner", "fiancée": "partner",
    "friend": "friend", "buddy": "friend", "bff": "friend", "pal": "friend",
}  # fmt: skip
# Relatives with no vocabulary predicate: the name is kept, no relation fact.
OTHER_KIN = {
    "grandmother", "grandfather", "grandma", "grandpa", "granny", "aunt", "uncle",
    "cousin", "niece", "nephew", "grandson", "granddaughter", "colleague", "boss",
    "coworker", "co-worker", "neighbor", "neighbour", "roommate", "flatmate",
    "mother-in-law", "father-in-law", "sister-in-law", "brother-in-law", "parents",
    "family", "manager", "therapist", "doctor", "teacher", "landlord",
}  # fmt: skip

PETS = {
    "dog", "cat", "puppy", "kitten", "hamster", "parrot", "rabbit", "bunny", "bird",
    "fish", "goldfish", "turtle", "tortoise", "horse", "pony", "pet", "snake", "lizard",
    "gecko", "ferret", "guinea pig", "budgie", "retriever", "labrador", "poodle",
    "terrier", "beagle", "spaniel", "husky", "dachshund", "chihuahua", "pug",
    "bulldog", "collie", "shepherd", "tabby", "rat", "mouse", "chicken", "goat",
    "greyhound", "whippet", "corgi", "schnauzer", "rottweiler", "doberman", "pitbull",
    "boxer", "cockatiel", "canary", "axolotl", "hedgehog", "chinchilla", "cockatoo",
    "lab", "mutt", "doggo", "kitty", "pup", "tomcat", "iguana", "tarantula", "rescue",
}  # fmt: skip

# Surface forms of the verbs the rules key on -> base form. The small model
# often mis-tags these ("detest"/ADJ, "studies"/NOUN, "like"/ADP), so the rules
# recognise them by spelling when they stand right after the subject.
_VERB_BASES = [
    "live",
    "reside",
    "move",
    "relocate",
    "settle",
    "work",
    "join",
    "start",
    "quit",
    "leave",
    "study",
    "attend",
    "graduate",
    "marry",
    "date",
    "divorce",
    "love",
    "like",
    "enjoy",
    "adore",
    "hate",
    "dislike",
    "detest",
    "loathe",
    "despise",
    "prefer",
    "own",
    "buy",
    "sell",
    "use",
    "run",
    "switch",
    "speak",
    "play",
    "visit",
    "travel",
    "fly",
    "turn",
    "adopt",
    "resign",
    "plan",
    "intend",
    "teach",
    "drive",
    "stop",
]
_IRREGULAR = {
    "left": "leave", "went": "go", "gone": "go", "flew": "fly", "flown": "fly",
    "bought": "buy", "sold": "sell", "ran": "run", "spoke": "speak", "spoken": "speak",
    "quit": "quit", "quits": "quit", "quitting": "quit", "taught": "teach",
    "drove": "drive", "driven": "drive", "stopped": "stop", "stopping": "stop",
    "planned": "plan", "planning": "plan", "running": "run",
}  # fmt: skip


def _forms(base: str) -> dict[str, str]:
    out = {base: base}
    if base.endswith("e"):
        out[base + "s"] = out[base + "d"] = out[base[:-1] + "ing"] = base
    elif base.endswith("y") and base[-2] not in "aeiou":
        out[base[:-1] + "ies"] = out[base[:-1] + "ied"] = out[base + "ing"] = base
    else:
        suffix = "es" if base.endswith(("sh", "ch", "ss", "x")) else "s"
        out[base + suffix] = out[base + "ed"] = out[base + "ing"] = base
    return out


VERB_FORMS: dict[str, str] = {}
for _base in _VERB_BASES:
    VERB_FORMS.update(_forms(_base))
VERB_FORMS.update(_IRREGULAR)

NUMBER_WORDS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
NUMBER_WORDS.update(
    {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
)

# Possessed attributes: "my <attr> is X" -> predicate.
ATTRIBUTES: dict[str, str] = {
    "job": "job_title", "occupation": "job_title", "profession": "job_title",
    "job title": "job_title", "title": "job_title", "role": "job_title",
    "birthday": "birthday", "date of birth": "birthday", "birth date": "birthday",
    "native language": "speaks", "first language": "speaks", "mother tongue": "speaks",
    "laptop": "owns", "computer": "owns", "phone": "owns", "car": "owns",
    "desktop": "owns", "machine": "owns", "bike": "owns", "tablet": "owns",
    "editor": "uses", "text editor": "uses", "ide": "uses", "shell": "uses",
    "os": "uses", "operating system": "uses", "browser": "uses", "distro": "uses",
    "terminal": "uses", "keyboard": "uses", "email client": "uses",
    "hometown": "born_in", "birthplace": "born_in", "home town": "born_in",
    "employer": "works_at", "company": "works_at", "school": "studies_at",
    "university": "studies_at", "college": "studies_at",
}  # fmt: skip

JOB_NOUNS = {
    "nurse", "doctor", "teacher", "engineer", "developer", "programmer", "designer",
    "architect", "lawyer", "attorney", "accountant", "dentist", "vet", "veterinarian",
    "pilot", "chef", "cook", "barista", "waiter", "waitress", "bartender", "paramedic",
    "firefighter", "police officer", "cop", "electrician", "plumber", "carpenter",
    "mechanic", "farmer", "scientist", "researcher", "professor", "lecturer",
    "student", "manager", "director", "consultant", "analyst", "journalist",
    "writer", "author", "editor", "photographer", "artist", "musician", "actor",
    "actress", "dancer", "singer", "surgeon", "pharmacist", "therapist",
    "psychologist", "psychiatrist", "physiotherapist", "midwife", "cashier",
    "clerk", "secretary", "receptionist", "librarian", "banker", "trader",
    "entrepreneur", "founder", "ceo", "cto", "cfo", "intern", "freelancer",
    "contractor", "driver", "baker", "butcher", "hairdresser", "barber", "tailor",
    "soldier", "officer", "sailor", "translator", "interpreter", "tutor", "coach",
    "administrator", "sysadmin", "recruiter", "salesperson", "marketer",
    "economist", "mathematician", "physicist", "chemist", "biologist", "historian",
    "philosopher", "judge", "paralegal", "caregiver", "nanny", "janitor",
    "cleaner", "gardener", "housekeeper", "technician", "welder", "builder",
    "surveyor", "planner", "strategist", "specialist", "assistant", "associate",
    "representative", "agent", "broker", "realtor", "courier", "postman",
    "programme manager", "product manager", "software engineer", "data scientist",
    "web developer", "civil servant", "social worker", "teaching assistant",
    "stay-at-home dad", "stay-at-home mom", "homemaker", "retiree", "lead", "head",
    "supervisor", "foreman", "instructor", "professional", "investor", "pastor",
    "priest", "rabbi", "imam", "nun", "monk", "mayor", "senator", "councillor",
    "diplomat", "ambassador", "fellow", "postdoc", "resident", "medic",
}  # fmt: skip
JOB_SUFFIXES = ("ist", "ician", "eer", "grapher", "ologist", "smith", "wright")
# Nouns that follow "I'm a ..." but are not jobs.
NOT_JOBS = {
    "vegetarian", "vegan", "fan", "person", "mess", "morning person", "night owl",
    "believer", "member", "runner", "lover", "fool", "beginner", "nerd", "geek",
    "foodie", "introvert", "extrovert", "perfectionist", "optimist", "pessimist",
    "realist", "idiot", "citizen", "native", "parent", "mom", "dad", "mother",
    "father", "twin", "gamer", "reader", "sleeper", "smoker", "drinker", "user",
    "customer", "owner", "speaker", "learner", "newbie", "fanatic", "tourist",
    "visitor", "guest", "patient", "christian", "muslim", "jew", "hindu",
    "buddhist", "atheist", "catholic", "leo", "virgo", "pisces", "scorpio",
}  # fmt: skip

LANGUAGES = {
    "english", "french", "spanish", "german", "italian", "portuguese", "dutch",
    "russian", "ukrainian", "polish", "czech", "slovak", "hungarian", "romanian",
    "bulgarian", "greek", "turkish", "arabic", "hebrew", "persian", "farsi", "urdu",
    "hindi", "bengali", "punjabi", "tamil", "telugu", "marathi", "gujarati",
    "malayalam", "kannada", "mandarin", "cantonese", "chinese", "japanese",
    "korean", "vietnamese", "thai", "indonesian", "malay", "tagalog", "filipino",
    "swahili", "amharic", "yoruba", "igbo", "hausa", "zulu", "xhosa", "afrikaans",
    "swedish", "norwegian", "danish", "finnish", "icelandic", "estonian",
    "latvian", "lithuanian", "serbian", "croatian", "bosnian", "slovenian",
    "albanian", "catalan", "basque", "galician", "welsh", "irish", "gaelic",
    "latin", "esperanto", "sign language", "asl", "bsl", "nepali", "sinhala",
    "burmese", "khmer", "lao", "mongolian", "kazakh", "uzbek", "georgian",
    "armenian", "azerbaijani", "somali", "maori", "hawaiian", "quechua",
}  # fmt: skip
ADJ_LANGUAGES = LANGUAGES

NATIONALITIES = {
    "american", "canadian", "mexican", "brazilian", "argentinian", "argentine",
    "chilean", "colombian", "peruvian", "venezuelan", "cuban", "british",
    "english", "scottish", "welsh", "irish", "french", "german", "italian",
    "spanish", "portuguese", "dutch", "belgian", "swiss", "austrian", "polish",
    "czech", "slovak", "hungarian", "romanian", "bulgarian", "greek", "turkish",
    "russian", "ukrainian", "swedish", "norwegian", "danish", "finnish",
    "icelandic", "estonian", "latvian", "lithuanian", "serbian", "croatian",
    "slovenian", "bosnian", "albanian", "chinese", "japanese", "korean",
    "vietnamese", "thai", "indonesian", "malaysian", "filipino", "singaporean",
    "indian", "pakistani", "bangladeshi", "sri lankan", "nepali", "nepalese",
    "afghan", "iranian", "iraqi", "syrian", "lebanese", "jordanian", "israeli",
    "palestinian", "saudi", "emirati", "egyptian", "moroccan", "algerian",
    "tunisian", "libyan", "nigerian", "ghanaian", "kenyan", "ethiopian",
    "somali", "ugandan", "tanzanian", "rwandan", "south african", "zimbabwean",
    "australian", "new zealander", "kiwi", "taiwanese", "mongolian", "kazakh",
    "georgian", "armenian", "us", "u.s.", "uk", "eu", "jamaican", "haitian",
    "dominican", "puerto rican", "ecuadorian", "bolivian", "uruguayan",
    "paraguayan", "cameroonian", "senegalese", "ivorian", "congolese", "sudanese",
}  # fmt: skip

OWNABLE = {
    "car", "bike", "bicycle", "motorbike", "motorcycle", "scooter", "house", "home",
    "apartment", "flat", "condo", "cabin", "cottage", "boat", "yacht", "van",
    "truck", "laptop", "computer", "pc", "desktop", "phone", "tablet", "ipad",
    "iphone", "camera", "guitar", "piano", "violin", "keyboard", "drone", "tv",
    "console", "watch", "garden", "farm", "business", "shop", "store", "bakery",
    "restaurant", "cafe", "café", "company", "studio", "property", "land",
    "e-bike", "ebike", "kindle", "printer", "telescope", "drum kit",
    "synthesizer", "monitor", "server", "nas", "raspberry pi", "convertible",
    "suv", "sedan", "hatchback", "pickup", "caravan", "rv", "tent",
}  # fmt: skip

SCHOOL_WORDS = {
    "university", "college", "school", "high", "elementary", "academy",
    "institute", "polytechnic", "conservatory", "kindergarten", "preschool",
    "nursery", "seminary", "mit", "ucl", "eth", "lse", "uni",
    # universities usually named bare ("goes to Harvard", "started at Oxford")
    "harvard", "yale", "princeton", "stanford", "oxford", "cambridge", "caltech",
    "berkeley", "cornell", "mcgill", "sorbonne", "ucla", "nyu", "epfl", "tsinghua",
}  # fmt: skip

# Adverbs dropped from the verb group: they change neither polarity nor tense.
SKIP_ADVERBS = {
    "really", "still", "just", "also", "actually", "honestly", "currently", "already",
    "even", "totally", "absolutely", "definitely", "truly", "genuinely", "mostly",
    "mainly", "basically", "pretty", "quite", "so", "very", "always", "usually",
    "generally", "primarily", "officially", "finally", "recently", "only",
    "literally", "seriously", "frankly", "personally", "now", "both",
    "all", "lately", "severely", "deathly", "super", "kinda", "deeply", "madly",
    "somewhat", "originally", "presently", "happily", "proudly", "technically",
    "then", "too", "again", "back", "permanently", "temporarily",
    "full-time", "part-time", "newly", "sometimes", "often",
}  # fmt: skip

# Words that end an object phrase.
BOUNDARY_ADVERBS = {
    "now", "anymore", "too", "lately", "again", "twice", "once", "right", "instead",
    "though", "either", "also", "here", "there", "everyday", "together", "ago",
    "full-time", "part-time", "remotely", "nowadays", "currently", "still",
    "mostly", "sometimes", "often", "daily", "weekly", "forever", "already",
    "yet", "soon", "tonight", "today", "tomorrow", "yesterday", "anyway", "btw", "lol",
    "haha", "honestly", "really", "actually",
}  # fmt: skip

# Verbs never used as fallback predicates: too generic or speech/attitude verbs.
FALLBACK_BLOCKLIST = {
    "be", "have", "do", "get", "go", "make", "say", "tell", "think", "know", "want",
    "need", "see", "look", "let", "come", "take", "give", "try", "feel", "seem",
    "call", "put", "keep", "mean", "talk", "ask", "help", "thank", "thanks", "wish",
    "hope", "guess", "believe", "suppose", "imagine", "remember", "forget",
    "remind", "note", "ignore", "mention", "hear", "rain", "snow", "happen",
    "become", "turn", "leave", "find", "show", "sound", "read", "watch", "wonder",
    "understand", "care", "mind", "bet", "promise", "recommend", "suggest",
    "book", "send", "write", "check", "start", "stop", "finish", "begin", "continue",
    "would", "could", "should", "might", "must", "can", "will", "shall", "may",
    "meet", "spend", "use", "like", "love", "hate", "enjoy", "prefer", "own",
    "visit", "play", "speak", "work", "live", "move", "study", "join", "quit",
    "buy", "sell", "adopt", "marry", "date", "attend", "graduate", "summarize",
    "agree", "decide", "authorise", "authorize", "approve", "confirm", "cancel",
    "plan", "intend", "expect", "doubt", "claim", "wait", "sleep", "eat", "drink",
    "run", "lose", "win", "pay", "cost", "release", "originate", "tour", "split",
    "break", "die", "bear", "name", "appreciate", "miss", "fly", "travel",
}  # fmt: skip

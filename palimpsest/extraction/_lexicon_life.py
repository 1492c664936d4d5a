"""Word lists for what people tell each other about their lives. Plain data.

>>> "parade" in EVENT_NOUNS, "club" in GROUP_NOUNS
(True, True)

Grounded in what the observations of LoCoMo's development conversations
record: events attended, groups joined, classes signed up for, things made,
read, watched and won, activities taken up. Each list names kinds of things,
never particular ones.
"""

from __future__ import annotations

__all__ = [
    "ACTIVITY_GERUNDS",
    "CREATION_NOUNS",
    "EVENT_NOUNS",
    "GROUP_NOUNS",
    "PRIZE_NOUNS",
    "VENUE_NOUNS",
]

# Things that happen and are attended, hosted or organised.
EVENT_NOUNS = {
    "event", "group", "meeting", "parade", "conference", "convention", "concert",
    "festival", "workshop", "class", "classes", "course", "lesson", "lessons",
    "seminar", "lecture", "talk", "party", "show", "game", "match", "wedding",
    "ceremony", "reading", "session", "fair", "race", "marathon", "run", "walk",
    "tournament", "competition", "contest", "championship", "camp", "retreat",
    "service", "exhibit", "exhibition", "gala", "fundraiser", "rally", "protest",
    "march", "picnic", "barbecue", "bbq", "potluck", "dinner", "lunch", "brunch",
    "trip", "tour", "hike", "cruise", "vacation", "holiday", "getaway", "roadtrip",
    "road trip", "drive", "audition", "interview", "recital", "performance", "gig",
    "premiere", "screening", "signing", "launch", "opening", "reunion", "shower",
    "funeral", "meetup", "meet-up", "hackathon", "expo", "summit", "symposium",
    "webinar", "auction", "sale", "market", "gathering", "celebration",
    "trivia", "quiz", "scrimmage", "practice", "rehearsal", "tryout", "tryouts",
    "playoff", "playoffs", "final", "finals", "season", "jam", "night", "outing",
    "excursion", "expedition", "visit", "sleepover",
    "jamboree", "carnival", "rodeo", "pageant", "orientation", "graduation",
    "program", "programme", "clinic", "bootcamp", "boot camp", "meditation",
    "circle", "club", "book club", "support group",
}  # fmt: skip
# Places one goes to without their being named ("went to the park").
VENUE_NOUNS = {
    "park", "beach", "museum", "gym", "library", "zoo", "aquarium", "theater",
    "theatre", "cinema", "movies", "church", "temple", "mosque", "shelter",
    "hospital", "studio", "center", "centre", "store", "shop", "mall", "market",
    "restaurant", "cafe", "café", "bar", "pub", "club", "lake", "mountains",
    "mountain", "forest", "woods", "river", "coast", "island", "countryside",
    "farm", "garden", "gallery", "stadium", "arena", "court", "pool", "spa",
    "salon", "office", "school", "college", "university", "campus", "castle",
    "cathedral", "palace", "monument", "landmark", "trail", "waterfall", "falls",
    "canyon", "valley", "desert", "village", "town", "city", "state", "country",
    "neighborhood", "neighbourhood", "playground", "bakery", "venue", "agency",
    "greenhouse", "vineyard", "winery", "brewery", "observatory", "planetarium",
    "rink", "track", "range", "resort", "hotel", "cabin", "campsite", "camp",
}  # fmt: skip
# Groups one joins or belongs to.
GROUP_NOUNS = {
    "group", "club", "team", "program", "programme", "class", "community",
    "organization", "organisation", "band", "choir", "league", "gym", "church",
    "society", "association", "union", "party", "network", "movement",
    "committee", "board", "crew", "squad", "circle", "collective", "guild",
    "council", "troupe", "ensemble", "orchestra", "cohort", "course",
    "fellowship", "initiative", "campaign", "charity", "nonprofit", "non-profit",
    "foundation", "academy", "studio", "company", "workshop", "forum", "server",
    "channel", "platform", "project", "mentorship", "internship",
}  # fmt: skip
# What a prize is called ("won a trophy", "received an award").
PRIZE_NOUNS = {
    "award", "prize", "trophy", "medal", "title", "championship", "cup",
    "scholarship", "grant", "fellowship", "certificate", "certification",
    "degree", "diploma", "belt", "ribbon", "honor", "honour", "accolade",
    "tournament", "competition", "contest", "game", "match", "race", "battle",
    "election", "bid", "case", "lottery", "raffle", "sweepstakes", "place",
}  # fmt: skip
# Things one makes ("made a bowl", "wrote a screenplay", "painted a sunset").
CREATION_NOUNS = {
    "painting", "drawing", "sketch", "portrait", "self-portrait", "mural",
    "sculpture", "bowl", "plate", "cup", "mug", "pot", "vase", "necklace",
    "bracelet", "quilt", "scarf", "sweater", "blanket", "card", "bookmark",
    "cake", "pie", "cookies", "bread", "dessert", "desserts", "meal", "dinner",
    "dish", "recipe", "ice cream", "pizza", "song", "album", "poem", "story",
    "book", "novel", "screenplay", "script", "article", "blog", "video", "film",
    "movie", "website", "app", "game", "logo", "collection", "design", "dress",
    "costume", "garden", "table", "shelf", "birdhouse", "model", "piece",
    "playlist", "podcast", "documentary", "comic", "zine", "presentation",
    "poster", "sign", "photo", "photograph", "picture", "artwork", "art",
}  # fmt: skip
# Activities named by a bare gerund ("went camping", "took up running").
ACTIVITY_GERUNDS = {
    "camping", "hiking", "swimming", "biking", "cycling", "running", "jogging",
    "skiing", "snowboarding", "surfing", "skating", "fishing", "hunting",
    "sailing", "kayaking", "canoeing", "rafting", "climbing", "bouldering",
    "dancing", "painting", "drawing", "sketching", "writing", "reading",
    "baking", "cooking", "gardening", "knitting", "sewing", "crocheting",
    "quilting", "singing", "shopping", "bowling", "golfing", "boxing",
    "rowing", "diving", "snorkeling", "snorkelling", "horseback riding",
    "riding", "volunteering", "meditating", "journaling", "photographing",
    "birdwatching", "stargazing", "exploring", "sightseeing", "traveling",
    "travelling", "backpacking", "walking", "skateboarding", "paddleboarding",
    "gaming", "streaming", "blogging", "vlogging", "coding", "programming",
    "studying", "teaching", "mentoring", "coaching", "training", "lifting",
    "weightlifting", "pottery", "yoga", "pilates", "tennis",
}  # fmt: skip

"""Ids for rows the engine creates: 128 random bits as 32 hex digits after a prefix.

>>> _new_id("fa")   # 'fa_3f0c…' (35 characters)
"""

from __future__ import annotations

import os
import random

_ids = random.Random()  # seeded from os.urandom; re-seeded in a forked child


def _new_id(prefix: str) -> str:
    # 128 random bits as 32 hex digits, the shape of a uuid4's hex at a tenth of its
    # cost (a bulk write makes two or three ids per assertion; a system call each was
    # 30 ms of a 5,000 batch). A fork would copy the generator's state: the child
    # re-seeds, or parent and child could hand out the same ids.
    return f"{prefix}_{_ids.getrandbits(128):032x}"


os.register_at_fork(after_in_child=_ids.seed)

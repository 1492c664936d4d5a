"""The bitemporal engine: the collaborators behind `Memory`'s writes and reads.

    >>> ctx = Context.open(store, clock=utcnow, namespace="default")
    >>> writer = Writer(ctx, vocab, entities, materialiser, embed=..., events=...)

- `context`: what every collaborator shares (store, clock and `tick`, the lock,
  the default namespace, the closed flag, the last K and seq);
- `vocabulary`: predicates (defaults, `define_predicate`, aliases, recast);
- `entities` (+ `name_map`): which entity a name denotes, entities created;
- `materialise`: a slot's whole log replayed at K into versions (through `temporal/`);
- `append`: the bounded write path, a write applied to the windows it touches;
- `writer` (+ `parse`, `gc_pause`): assert, end, retract, bulk;
- `eraser`: erase; `reader`: facts, history, entity, snapshot, changes, stats;
- `episodes`: remember; `uses`: recall's use log; `asof`: contests and merges
  as of a time; `events`: who drops which cache when; `rows`: row -> model.

Nothing here imports another room's collaborators at module level but the
pure helpers it needs (`recall._statements`); `Memory` wires them together.
"""

"""The nightly run's steps, each a plain class built with what it uses.

    >>> Expire(cs).run(run)            # every step: run(Run) -> None, changes in run

In the order the runner (`consolidation.runner`) calls them: `dedupe`
(near-identical episodes), `merge` (entities that are one; `unmerge` undoes one),
`reconcile` (conflicting one-valued claims), `promote` (quarantined claims
promoted, confirmed or rejected), `expire` (windows that closed), `decay` (cold
episodes archived), `index` (recall's HNSW generation). Each reads only what
changed since the watermark (`run.since`), decides with the pure rules of
`consolidation/`, and writes in its own transaction, so a crash between steps
leaves finished steps done and the next run redoes the rest (every decision is
recomputed from the stored state, so redoing is safe).
"""

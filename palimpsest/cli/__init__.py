"""The `palimpsest` command: a thin shell over the `Memory` facade.

    $ palimpsest assert user lives_in Sydney --from 2024-06-01T00:00:00Z
    $ palimpsest facts user lives_in --valid-at 2024-09-01T00:00:00Z --json
    $ palimpsest demo

Short verbs in the style of sqlite-utils; every read takes `--json`, and prints
plain aligned columns otherwise. Times are ISO-8601 strings with a timezone
(naive times are refused by the engine). Engine errors print
`error [<code>]: <message>` on stderr and exit 2; anything unexpected exits 1.

One module per command group: `writes` (assert, end, retract, erase, remember,
define-predicate), `reads` (facts, history, entity, snapshot, changes,
predicates, stats), `recall` (recall, reindex), `consolidate` (consolidate,
unmerge), `transfer` (import, export), `server` (serve, token), `mcp`, `demo`;
`common` and `format` are what they share, `app` registers them all.

`palimpsest --help` must stay instant: the engine (`palimpsest.memory`, and with
it Kùzu) is imported inside the commands, never at module level. This package is
the only part of Palimpsest that reads environment variables.
"""

from .app import app, main

__all__ = ["app", "main"]

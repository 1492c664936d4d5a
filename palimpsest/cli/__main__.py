"""`python -m palimpsest.cli`: the console script, run from the canonical module."""

from palimpsest.cli import main

main()

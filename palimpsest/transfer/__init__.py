"""Moving memories in and out: the export format, importers, GraphML.

    >>> from palimpsest.transfer import parse_export, sniff
    >>> sniff(first_line)
    'export'

What this package exports is pure parsing and formatting (`_export`, `_import`,
`_format`, `_transcripts`, `_locomo`, `_graphml`). The collaborators that read and
write a memory with them are its modules `exporter` (export), `restorer`
(restore) and `importers` (transcripts, LoCoMo), imported by `Memory` only; the
Cypher is `graph/_transfer.py`.
"""

from ._export import FIELDS, aux_record, header, record, trailer
from ._format import (
    AUX_TYPES,
    FORMAT,
    FORMATS,
    KINDS,
    VERSION,
    dumps,
    fact_batches,
    fmt_time,
    sniff,
)
from ._graphml import write_graphml
from ._import import ExportData, parse_export
from ._locomo import parse_date, parse_locomo
from ._transcripts import parse_transcript

__all__ = [
    "AUX_TYPES",
    "FIELDS",
    "FORMAT",
    "FORMATS",
    "KINDS",
    "VERSION",
    "ExportData",
    "aux_record",
    "dumps",
    "fact_batches",
    "fmt_time",
    "header",
    "parse_date",
    "parse_export",
    "parse_locomo",
    "parse_transcript",
    "record",
    "sniff",
    "trailer",
    "write_graphml",
]

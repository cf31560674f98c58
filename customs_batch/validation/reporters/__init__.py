"""Report formats for validation results: text, json, github, junit, sarif, markdown and
html.

Each format is a :class:`Reporter` registered by name; the CLI's ``--format`` choices come
from :func:`reporter_names`, and :func:`make_reporter` builds one.
"""

from __future__ import annotations

# Importing the format modules registers them.
from customs_batch.validation.reporters import (
    _github,
    _html,
    _json,
    _junit,
    _markdown,
    _sarif,
    _text,
)
from customs_batch.validation.reporters._base import (
    FINDINGS_FORMATS,
    Reporter,
    ReportOptions,
    make_reporter,
    reporter_names,
    summary_line,
)

__all__ = [
    "FINDINGS_FORMATS",
    "ReportOptions",
    "Reporter",
    "make_reporter",
    "reporter_names",
    "summary_line",
]

del _github, _html, _json, _junit, _markdown, _sarif, _text

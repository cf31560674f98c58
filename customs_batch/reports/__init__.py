"""How a plan is shown: one registry of output formats by name.

``text`` for people, ``json`` for tools, ``markdown`` for a pull-request comment or a job
summary, ``html`` for a page that opens in any browser, ``mermaid`` and ``dot`` for the
dependency graph. ``plan --format`` takes its choices from :func:`plan_format_names`; :func:`render_plan` renders a :class:`PlanView`.
"""

from __future__ import annotations

# Importing the format modules registers them.
from customs_batch.reports import _dot, _html, _json, _markdown, _mermaid, _text
from customs_batch.reports._apply import apply_markdown
from customs_batch.reports._base import (
    PLAN_FORMATS,
    PlanView,
    plan_format_names,
    render_plan,
    render_plan_pieces,
)
from customs_batch.reports._words import duration, rate_per_second, summary_text

__all__ = [
    "PLAN_FORMATS",
    "PlanView",
    "apply_markdown",
    "duration",
    "plan_format_names",
    "rate_per_second",
    "render_plan",
    "render_plan_pieces",
    "summary_text",
]

del _dot, _html, _json, _markdown, _mermaid, _text

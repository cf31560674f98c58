"""docs/reliability.md from the figures of a run of the suite (filled in below)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_report(record: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")

"""Source lines for the text report, read once per file and only when a finding needs them."""

from __future__ import annotations

from pathlib import Path


class SourceLines:
    """A lazy cache of the lines of the files findings point into."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def line(self, file: str, number: int) -> str | None:
        """Line ``number`` (1-based) of ``file``; None when the file is not readable text."""
        if number < 1:
            return None
        if file not in self._files:
            self._files[file] = _read_lines(file)
        lines = self._files[file]
        if lines is None or number > len(lines):
            return None
        return lines[number - 1]


def _read_lines(file: str) -> list[str] | None:
    try:
        data = Path(file).read_bytes()
    except OSError:
        return None
    if b"\0" in data:  # a binary file: its "lines" would only garble the terminal
        return None
    return data.decode("utf-8", errors="replace").splitlines()

"""An HTML report read back with the standard library's parser, for the tests that need no
browser: the elements it holds, the table's headers and cells, the text of an element."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Page:
    """What a page holds: every start tag with its attributes, the table's headers and rows
    (the text of each cell, entities decoded), the summary and the SVG's texts."""

    tags: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    row_classes: list[str | None] = field(default_factory=list)
    summary: str = ""
    svg_texts: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)

    def count(self, tag: str, cls: str | None = None) -> int:
        """How many ``tag`` elements (of class ``cls``, when given)."""
        return sum(
            1
            for name, attrs in self.tags
            if name == tag and (cls is None or attrs.get("class") == cls)
        )


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._open: list[str] = []
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.page.tags.append((tag, dict(attrs)))
        if tag == "br":
            if self._text is not None:
                self._text.append("\n")
            return
        if tag == "tr" and "tbody" in self._open:
            self.page.rows.append([])
            self.page.row_classes.append(dict(attrs).get("class"))
        if tag in ("td", "th", "text", "title") or (tag == "p" and ("id", "summary") in attrs):
            self._text = []
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop() != tag:
            pass
        if self._text is None:
            return
        content = "".join(self._text)
        if tag == "td":
            self.page.rows[-1].append(content)
        elif tag == "th":
            self.page.headers.append(content)
        elif tag == "text":
            self.page.svg_texts.append(content)
        elif tag == "title":
            self.page.titles.append(content)
        elif tag == "p":
            self.page.summary = content
        else:
            return
        self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def read_page(text: str) -> Page:
    """``text`` parsed."""
    reader = _Reader()
    reader.feed(text)
    reader.close()
    return reader.page

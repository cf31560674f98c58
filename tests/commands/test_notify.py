"""How the notification URLs in a variable's value are told apart."""

from __future__ import annotations

import pytest

from customs_batch.commands._notify import split_urls


@pytest.mark.parametrize(
    ("value", "urls"),
    [
        ("", []),
        ("json://h/a", ["json://h/a"]),
        ("json://h/a slack://T/B/C", ["json://h/a", "slack://T/B/C"]),
        ("json://h/a,slack://T/B/C", ["json://h/a", "slack://T/B/C"]),
        (" json://h/a ,\n msteams://x/y, ", ["json://h/a", "msteams://x/y"]),
        # A comma inside a URL (two recipients of one e-mail) does not split it.
        ("mailtos://u:p@mail.example?to=a@x.example,b@x.example", None),
    ],
)
def test_urls_are_separated_by_spaces_or_commas(value: str, urls: list[str] | None) -> None:
    assert split_urls(value) == (urls if urls is not None else [value])

"""Words of findings shared by every module."""

from __future__ import annotations

import pytest

from customs_batch.errors import CustomsBatchError
from customs_batch.findings import a_or_an
from customs_batch.kinds import Address, Kind
from customs_batch.kinds.model import number


@pytest.mark.parametrize(
    ("word", "said"),
    [
        ("integer", "an integer"),
        ("integer or null", "an integer or null"),
        ("number", "a number"),
        ("object", "an object"),
        ("ExportCancellation", "an ExportCancellation"),
        ("HawbDeactivation", "a HawbDeactivation"),
        ("unique name", "a unique name"),
        ("undefined value", "an undefined value"),
    ],
)
def test_a_word_takes_the_article_it_is_said_with(word: str, said: str) -> None:
    assert a_or_an(word) == said


def test_an_id_of_an_export_cancellation_is_named_with_its_article() -> None:
    # It said "'x' is not an ID of a ExportCancellation".
    with pytest.raises(CustomsBatchError) as raised:
        number("x", Address(Kind.EXPORT_CANCELLATION, "a"))
    assert "is not an ID of an ExportCancellation:" in str(raised.value)

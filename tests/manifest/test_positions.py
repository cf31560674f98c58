"""Every value keeps the file, line and column (1-based) where it was written."""

from __future__ import annotations

from customs_batch.manifest.document import Position
from tests.manifest.helpers import ENVELOPE, load_text

TEXT = f"""# a comment
{ENVELOPE}kind: DepartureDeclaration
metadata:
  name: dep-1
spec:
  Principal:
    name: Acme
  DeclarationItems:
    - description: Bolts
      quantity: 3
---
{ENVELOPE}kind: Movement
metadata: {{name: mov-1}}
spec: {{shipmentId: shp_1}}
"""


def test_values_have_their_line_and_column() -> None:
    first, second = load_text(TEXT).documents
    assert first.positions[("spec", "Principal", "name")] == Position("m.yaml", 8, 11)
    assert first.positions[("spec", "DeclarationItems", 0, "quantity")] == Position(
        "m.yaml", 11, 17
    )
    assert first.positions[("metadata", "name")] == Position("m.yaml", 5, 9)
    assert second.positions[("spec", "shipmentId")] == Position("m.yaml", 16, 20)


def test_documents_know_where_they_start_and_their_order() -> None:
    first, second = load_text(TEXT).documents
    assert first.source == Position("m.yaml", 2, 1)
    assert second.source.line == 13
    assert (first.index, second.index) == (0, 1)


def test_locate_falls_back_to_the_key_of_the_nearest_written_parent() -> None:
    first = load_text(TEXT).documents[0]
    # A field Principal lacks is added under "Principal:", so that key is the place to act.
    location = first.locate(("spec", "Principal", "eoriNo"))
    assert (location.line, location.column) == (7, 3)
    assert location.path == ("spec", "Principal", "eoriNo")

"""The public API of customs_batch.manifest, and results that cross process boundaries."""

from __future__ import annotations

import pickle

import customs_batch.manifest as manifest
from tests.manifest.helpers import load_text, movement


def test_the_public_names() -> None:
    assert sorted(manifest.__all__) == [
        "Document",
        "LoadResult",
        "MAX_DOCUMENT_VALUES_VARIABLE",
        "MAX_LINE_MB_VARIABLE",
        "NO_ROW_IN_RANGE",
        "Position",
        "Reference",
        "RowRange",
        "discover",
        "find_project_root",
        "iter_file",
        "load_file",
        "load_paths",
        "max_document_values",
    ]


def test_a_load_result_pickles_with_its_positions() -> None:
    result = load_text(movement("  shipmentId: ${ref:Movement/a.status}\n") + "---\nx: [\n")
    copy = pickle.loads(pickle.dumps(result))
    assert copy.findings == result.findings
    assert copy.documents[0].spec == result.documents[0].spec
    assert dict(copy.documents[0].positions) == dict(result.documents[0].positions)
    assert copy.documents[0].references == result.documents[0].references

"""quick_pickle: documents, positions and addresses pickle as calls of their class."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any, cast

from customs_batch.kinds import Address, Kind
from customs_batch.manifest import load_paths
from customs_batch.manifest.document import Document, Position

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "manifests"


def test_documents_come_back_equal_with_their_address() -> None:
    documents = load_paths([EXAMPLES]).documents
    back = pickle.loads(pickle.dumps(documents, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == documents
    assert [doc.address for doc in back] == [doc.address for doc in documents]
    assert copy.deepcopy(documents) == documents


def test_they_pickle_as_a_call_of_their_class_without_a_state() -> None:
    position = Position("m.yaml", 3, 5)
    address = Address(Kind.MOVEMENT, "mov-1")
    assert position.__reduce__() == (
        Position,
        ("m.yaml", 3, 5, None, None, None, None, None, None),
    )
    assert address.__reduce__() == (Address, (Kind.MOVEMENT, "mov-1"))
    document = load_paths([EXAMPLES]).documents[0]
    rebuilt, values = cast(tuple[Any, tuple[Any, ...]], document.__reduce__())
    assert rebuilt is Document
    assert document.address not in values  # made again by __post_init__
    assert rebuilt(*values) == document

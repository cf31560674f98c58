"""A document written outside a manifest (a policy's example), checked as a manifest's
envelope is, so what a policy is tried on is what it meets in a manifest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from customs_batch.findings import Finding
from customs_batch.kinds import API_VERSION
from customs_batch.manifest.documents._envelope import Envelope, read_envelope
from customs_batch.manifest.yaml._tree import Walk

__all__ = ["Envelope", "read_standalone"]


def read_standalone(data: Mapping[str, Any], file: str) -> Envelope | Finding:
    """The envelope of ``data`` (kind, metadata and spec; ``apiVersion`` may be left out),
    or the first problem a manifest would have with it: a finding whose location's path
    says where in ``data``."""
    document = {"apiVersion": API_VERSION, **data}
    walk = Walk(file, track_aliases=False)
    envelope = read_envelope(document, walk)
    if envelope is None:
        return walk.findings[0]
    return envelope

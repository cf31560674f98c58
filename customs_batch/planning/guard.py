"""The guard on the size of a change, on by default (like octoDNS's update thresholds).

Once the state holds at least ``min_records`` records, an apply whose creates exceed
``max_create_share`` of them stops before it sends anything, unless the user says the change
is meant (``apply --allow-large-change``): a re-exported sheet with every row doubled looks
like any other batch to a pipeline that applies on merge. A first bulk load into a small
state is not stopped. Neither is the rest of one that ran out of its time budget: the
command apply prints to go on says ``--allow-large-change`` when the guard would stop it.
"""

from __future__ import annotations

from customs_batch.planning.model import LargeChange

__all__ = ["LargeChange", "large_change"]


def large_change(
    creates: int, recorded: int, *, min_records: int, max_create_share: float
) -> LargeChange | None:
    """What stops an apply of ``creates`` creates to a state of ``recorded`` records, or
    None when it is small enough (or the state too small for the guard to apply)."""
    if recorded < min_records or creates <= max_create_share * recorded:
        return None
    return LargeChange(creates, recorded, min_records, max_create_share)

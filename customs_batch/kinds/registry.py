"""Every kind's model, by kind: the one place the generic code learns what a kind does."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from customs_batch.kinds import (
    Kind,
    departure,
    export_cancellation,
    hawb_deactivation,
    movement,
    template_group,
    transit_party_update,
)
from customs_batch.kinds.actions import Operation
from customs_batch.kinds.model import KindModel, SendFunction

KINDS: Mapping[Kind, KindModel] = MappingProxyType(
    {
        model.kind: model
        for model in (
            template_group.MODEL,
            departure.MODEL,
            transit_party_update.MODEL,
            movement.MODEL,
            hawb_deactivation.MODEL,
            export_cancellation.MODEL,
        )
    }
)

SEND: Mapping[Operation, SendFunction] = MappingProxyType(
    {operation: send for model in KINDS.values() for operation, send in model.send.items()}
)
"""The function that sends each operation, whichever kind it belongs to."""


def model_of(kind: Kind) -> KindModel:
    """The model of ``kind``."""
    return KINDS[kind]

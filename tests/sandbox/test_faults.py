"""Fault injection: the spec, reproducible draws, faults before and after the request's effect."""

from __future__ import annotations

import httpx
import pytest

from customs_batch.errors import UsageError
from customs_batch.sandbox import FaultSpec, parse_faults
from customs_batch.sandbox.faults import Fault, FaultDice
from tests.sandbox.conftest import MOVEMENTS, ClientFactory, movement


def test_parse_the_documented_example() -> None:
    spec = parse_faults("5xx=0.1,drop=0.05,slow=0.2:1.5s,429=0.05,drop-after=0.02,5xx-after=0.02")
    assert dict(spec.probabilities) == {
        Fault.ERROR: 0.1,
        Fault.DROP: 0.05,
        Fault.RATE_LIMIT: 0.05,
        Fault.DROP_AFTER: 0.02,
        Fault.ERROR_AFTER: 0.02,
    }
    assert (spec.slow_probability, spec.slow_seconds) == (0.2, 1.5)
    assert not parse_faults("").active


@pytest.mark.parametrize(
    "text",
    [
        *("5xx", "boom=0.1", "5xx=2", "5xx=x", "slow=0.5", "5xx=0.6,drop=0.6"),
        *("slow=0.5:1.2.3s", "slow=0.5:.s", "slow=nan:1s", "5xx=nan"),
    ],
)
def test_bad_specs_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="invalid --faults spec"):
        parse_faults(text)


@pytest.mark.parametrize("text", ["5xx=0.1,5xx=0.2", "5xx=0.1,5XX=0.1", "slow=0.1:1s,slow=0.2:2s"])
def test_a_fault_named_twice_is_refused_rather_than_one_of_its_values_taken(text: str) -> None:
    with pytest.raises(UsageError, match="named twice"):
        parse_faults(text)


def _draws(spec: FaultSpec, seed: int) -> list[tuple[Fault, float]]:
    dice = FaultDice(spec, seed)
    return [dice.draw() for _ in range(50)]


def test_draws_repeat_with_the_same_seed() -> None:
    spec = parse_faults("5xx=0.3,drop=0.3,slow=0.5:2s")
    assert _draws(spec, 7) == _draws(spec, 7)
    assert _draws(spec, 7) != _draws(spec, 8)
    assert {fault for fault, _ in _draws(spec, 7)} == {Fault.NONE, Fault.ERROR, Fault.DROP}
    assert {delay for _, delay in _draws(spec, 7)} == {0.0, 2.0}


def test_5xx_strikes_before_the_request_takes_effect(make_api: ClientFactory) -> None:
    api = make_api(faults=parse_faults("5xx=1"), fault_seed=1)
    response = api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"})
    assert response.status_code == 503
    assert api.get("/_sandbox/movements").json() == []


def test_drop_after_strikes_once_the_movement_exists(make_api: ClientFactory) -> None:
    api = make_api(faults=parse_faults("drop-after=1"), fault_seed=1)
    with pytest.raises(httpx.RemoteProtocolError):
        api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"})
    assert len(api.get("/_sandbox/movements").json()) == 1


def test_5xx_after_then_retry_with_the_same_key_replays(make_api: ClientFactory) -> None:
    api = make_api(faults=parse_faults("5xx-after=1"), fault_seed=1)
    assert api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"}).status_code == 503
    assert api.post(MOVEMENTS, json=movement(), headers={"Idempotency-Key": "k"}).status_code == 503
    assert len(api.get("/_sandbox/movements").json()) == 1


def test_spurious_429_has_retry_after(make_api: ClientFactory) -> None:
    response = make_api(faults=parse_faults("429=1")).get("/v1/shipments")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1"


def test_inspection_and_openapi_never_suffer_faults(make_api: ClientFactory) -> None:
    api = make_api(faults=parse_faults("drop=1"))
    assert api.get("/_sandbox/stats").status_code == 200
    assert api.get("/openapi.json").status_code == 200

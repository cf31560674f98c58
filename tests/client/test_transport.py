from __future__ import annotations

import logging

import httpx
import pytest

from customs_batch import __version__
from customs_batch.client import (
    NO_RETRIES,
    ConnectionFailedError,
    Sender,
    UnexpectedResponseError,
)


def _echo(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"headers": dict(request.headers), "url": str(request.url)})


def test_every_request_carries_the_key_the_user_agent_and_the_query() -> None:
    sent: list[httpx.Request] = []

    def keep(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return _echo(request)

    transport = httpx.MockTransport(keep)
    sender = Sender("http://svc.test", "k-1", transport=transport)
    answer = sender.send("GET", "/v1/shipments", params={"page": "2"})
    (request,) = sent
    assert request.headers["authorization"] == "Bearer k-1"
    assert request.headers["user-agent"] == f"customs-batch/{__version__}"
    assert str(request.url) == "http://svc.test/v1/shipments?page=2"
    # An answer that quotes the key (as this echo does) is handed on with *** instead.
    assert answer["headers"]["authorization"] == "Bearer ***"


def test_the_http_log_redacts_the_key(caplog: pytest.LogCaptureFixture) -> None:
    sender = Sender("http://svc.test", "k-secret-77", transport=httpx.MockTransport(_echo))
    with caplog.at_level(logging.DEBUG, logger="customs_batch.client"):
        sender.send("GET", "/v1/shipments")
    assert "GET http://svc.test/v1/shipments -> 200" in caplog.text
    assert "Bearer ***" in caplog.text
    assert "k-secret-77" not in caplog.text


def test_a_success_that_is_not_json_is_explained() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(200, text="<html>login</html>"))
    sender = Sender("http://svc.test", "k", transport=transport)
    with pytest.raises(UnexpectedResponseError, match="not JSON") as caught:
        sender.send("GET", "/v1/shipments")
    assert "base_url" in str(caught.value.hint)


def test_an_empty_success_is_none() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(204))
    assert Sender("http://svc.test", "k", transport=transport).send("DELETE", "/v1/x") is None


def test_a_service_out_of_reach_behind_a_proxy_names_the_proxy_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Requests go through the proxy the environment names: a dead one is not the base_url.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(ConnectionFailedError) as caught:
        Sender("http://svc.test", "k", retry_policy=NO_RETRIES).send("GET", "/v1/shipments")
    assert str(caught.value.hint).startswith("check the proxy the environment names")
    monkeypatch.delenv("HTTP_PROXY")
    with pytest.raises(ConnectionFailedError) as direct:
        Sender("http://127.0.0.1:9", "k", retry_policy=NO_RETRIES).send("GET", "/v1/shipments")
    assert str(direct.value.hint).startswith("check the environment's base_url")

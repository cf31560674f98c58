"""Sending one request: the rate limiter, retries, typed errors, redacted logging, and a
connection pool for each thread that sends.

This is the only place that talks to httpx and httpcore. ``Sender.send`` returns the parsed JSON body of
a 2xx response or raises one of the errors of ``customs_batch.client._errors``.

Keys are rotated, and a long run can outlive its key: given a ``key_source``, a 401 makes
the sender read the key again, once; a key that changed replaces the old one for this
request (sent again: a 401 means the service did nothing) and every later one. An
unchanged key, or one that cannot be read, leaves the 401 to stop the run as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import unquote

import httpcore
import httpx

from customs_batch import __version__
from customs_batch.client._errors import (
    AuthenticationError,
    ConnectionFailedError,
    NotSentError,
    RateLimitedError,
    TlsFailedError,
    UnexpectedResponseError,
    error_for_status,
    redact,
)
from customs_batch.client._models import Exchange
from customs_batch.client._ratelimit import RateLimit, RateLimiter
from customs_batch.client._retry import RetryPolicy, is_repeatable, is_transient
from customs_batch.errors import CustomsBatchError, ServiceError
from customs_batch.jsontypes import JSON

USER_AGENT = f"customs-batch/{__version__}"
logger = logging.getLogger("customs_batch.client")


class PoolPerThread:
    """The network, through a connection pool of its own for each thread that sends.

    One pool shared by apply's workers cost each request a look at every idle connection
    of the pool (httpcore asks each whether the server closed it: one ``poll`` call each),
    and every such call, like the pool's lock, hands the GIL to another worker. A pool for
    each thread looks at that thread's one connection only: apply at parallelism 8 against
    ``sandbox serve`` did 8 % more operations a second for 10 % less CPU each (see
    docs/benchmarks.md). Each thread keeps its connection alive between its requests, so a
    run holds one connection for each thread that sends: apply's workers, as the shared
    pool did, and the main thread when it reads from the service too. The pools of
    threads that have ended are closed when the next pool is made, and every pool with
    ``close``. All of them share one TLS context, made as httpx makes a client's own.

    The pools are httpcore's, which httpx's client drives: a request is handed to them
    as bytes, and their errors come back as httpx's, as from the client. Going through
    httpx's client and transport instead (its merging of URLs, headers and cookies, its
    handling of auth and redirects, its request and stream objects, none of which the
    service needs) took 29 % of apply's samples per operation (docs/benchmarks.md).
    Used where the environment names no proxy: behind one, the sender keeps httpx's own
    client, which httpx routes through it.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()  # the list of pools
        self._pools: list[tuple[threading.Thread, httpcore.ConnectionPool]] = []
        self._context: ssl.SSLContext | None = None

    def exchange(
        self,
        method: bytes,
        url: httpcore.URL,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeouts: Mapping[str, float | None],
    ) -> httpcore.Response:
        """Send one request on this thread's pool and return its answer, read whole.

        Raises httpx's error for what went wrong (``httpx.ConnectError``,
        ``httpx.ReadTimeout``…), caused by httpcore's, as httpx's client would.
        """
        pool: httpcore.ConnectionPool | None = getattr(self._local, "pool", None)
        if pool is None:
            pool = self._local.pool = self._new_pool(url.scheme == b"https")
        try:
            return pool.request(
                method,
                url,
                headers=headers,
                content=body or None,  # httpcore would add "Content-Length: 0" to a GET
                extensions={"timeout": timeouts},
            )
        except _CORE_ERRORS as exc:
            raise httpx_error(exc) from exc

    def _new_pool(self, secure: bool) -> httpcore.ConnectionPool:
        with self._lock:
            if secure and self._context is None:
                self._context = httpx.create_ssl_context()
            # What httpx.HTTPTransport() makes, with the shared context.
            pool = httpcore.ConnectionPool(
                ssl_context=self._context,
                max_connections=100,
                max_keepalive_connections=20,
                keepalive_expiry=5.0,
            )
            ended = [old for thread, old in self._pools if not thread.is_alive()]
            self._pools = [(thread, old) for thread, old in self._pools if thread.is_alive()]
            self._pools.append((threading.current_thread(), pool))
        for done in ended:
            done.close()
        return pool

    def close(self) -> None:
        with self._lock:
            pools, self._pools = self._pools, []
        for _, pool in pools:
            pool.close()


# httpcore's errors and the httpx error httpx's client raises for each, most specific first.
_ERROR_TABLE: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
)
_CORE_ERRORS = tuple(core for core, _ in _ERROR_TABLE)


def httpx_error(exc: Exception) -> httpx.TransportError:
    """The httpx error httpx's client raises for ``exc``, one of httpcore's."""
    for core, ours in _ERROR_TABLE:
        if isinstance(exc, core):
            return ours(str(exc))
    raise TypeError(f"{type(exc).__name__} is not an error of httpcore's network")


# Path characters sent as they are (httpx would percent-encode any other).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*")


class Sender:
    """Sends requests to one service with one key, under one rate limiter."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        rate_limiter: RateLimiter | None = None,
        retry_policy: RetryPolicy | None = None,
        timeout: httpx.Timeout | float = 30.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        key_source: Callable[[], str] | None = None,
    ) -> None:
        self._key = api_key
        self._key_source = key_source
        self._key_lock = threading.Lock()
        self.rate_limiter = rate_limiter or RateLimiter(RateLimit(None))
        self.retry_policy = retry_policy or RetryPolicy()
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._watched = threading.local()
        self.before_send: Callable[[], None] | None = None
        """Called right before each attempt leaves, after any rate-limit wait or backoff;
        an exception it raises keeps the attempt unsent and ends the send."""
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        self._reach_hint = (
            "check the proxy the environment names (HTTPS_PROXY, HTTP_PROXY or ALL_PROXY: "
            "requests go through it), then the environment's base_url and the network"
            if transport is None and _proxied_by_environment()
            else "check the environment's base_url and the network"
        )
        self._wire: PoolPerThread | None = None
        self._http: httpx.Client | None = None
        url = httpx.URL(base_url)
        if (
            transport is None
            and url.scheme in ("http", "https")
            and url.host
            and not url.userinfo  # httpx's client turns it into a header of its own
            and not _proxied_by_environment()
        ):
            # The headers httpx's client sends, in its order, and the same timeouts.
            self._wire = PoolPerThread()
            self._origin = (url.raw_scheme, url.raw_host, url.port)
            self._prefix = url.raw_path.rstrip(b"/") + b"/"
            self._headers = [
                (b"Host", url.netloc),
                (b"Accept-Encoding", b"gzip, deflate"),  # what httpx.Response decodes
                (b"Connection", b"keep-alive"),
                (b"User-Agent", USER_AGENT.encode()),
                (b"Accept", b"application/json"),
            ]
            self._timeouts = httpx.Timeout(timeout).as_dict()
        else:
            # httpx's client: with the transport given (the sandbox in this process, a
            # test's), behind a proxy (the client mounts its pool for the proxy the
            # environment names), and for a URL the pools are not given (no scheme, a user
            # name in it), which the client refuses or handles as before.
            self._http = httpx.Client(
                base_url=base_url, transport=transport, timeout=timeout, headers=headers
            )

    def close(self) -> None:
        """Close the connection pool."""
        if self._wire is not None:
            self._wire.close()
        if self._http is not None:
            self._http.close()

    @contextmanager
    def retried_until(self, seconds: float) -> Iterator[None]:
        """Requests this thread sends in the block are attempted again (after a 429, a
        retried failure) only while they can leave within ``seconds`` from now: a request
        under an Idempotency-Key the service honours for that long, which an attempt after
        it would no longer protect. A wait that would end later gives up with the error met
        (as when the retries run out)."""
        previous = getattr(self._watched, "deadline", None)
        self._watched.deadline = self._clock() + seconds
        try:
            yield
        finally:
            self._watched.deadline = previous

    def _in_time(self, wait: float, operation: str, key: str | None) -> bool:
        """Whether an attempt after ``wait`` seconds leaves before this thread's deadline
        (:meth:`retried_until`)."""
        deadline: float | None = getattr(self._watched, "deadline", None)
        if deadline is None or self._clock() + wait <= deadline:
            return True
        logger.warning(
            "%s: not sent again: its Idempotency-Key %s is honoured by the service for less "
            "than the %.1f s to wait before the next attempt",
            operation,
            key,
            wait,
        )
        return False

    def watch(self) -> list[Exchange]:
        """A list that the attempts this thread makes from now on are added to (each
        attempt once it is built, its answer's status once it comes): what apply's
        history records of a request. A later call starts a new list."""
        exchanges: list[Exchange] = []
        self._watched.exchanges = exchanges
        return exchanges

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Mapping[str, object] | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Send until success or a final error; return the response's JSON (None if empty)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        operation = f"{method} {path}"
        repeatable = is_repeatable(method, has_idempotency_key=idempotency_key is not None)
        started = self._clock()
        failures = rate_limited = maybe_processed = 0
        rotated = False
        while True:
            self.rate_limiter.acquire()
            key = self._key
            try:
                try:
                    return self._attempt(method, path, params, body, headers, operation, key)
                finally:
                    self.rate_limiter.release()  # answered or failed: it ages out of the window
            except AuthenticationError:
                # One new key per request: a rotated key that is refused too is final.
                if rotated or not self._rotate(key):
                    raise
                rotated = True
                logger.warning(
                    "%s: the service refused the API key, and its source holds a new one: "
                    "sending again with the new key",
                    operation,
                )
            except RateLimitedError as error:
                # The service turned the request away unprocessed: resending is always safe.
                self.rate_limiter.pause(error.retry_after)
                rate_limited += 1
                if rate_limited > self.retry_policy.max_rate_limited or not self._in_time(
                    error.retry_after, operation, idempotency_key
                ):
                    # Whether an attempt before may have been processed (a 5xx retried).
                    error.after_failures = maybe_processed
                    raise
                logger.info("%s: rate limited, waiting %.1f s", operation, error.retry_after)
            except ServiceError as error:
                failures += 1
                if not isinstance(error, NotSentError):  # it left: it may have been processed
                    maybe_processed += 1
                # A request that never left may always be sent again, even a plain POST.
                if not ((repeatable or isinstance(error, NotSentError)) and is_transient(error)):
                    raise
                delay = self.retry_policy.backoff(failures, self._rng)
                elapsed = self._clock() - started
                if not self.retry_policy.may_retry(
                    attempts=failures, elapsed=elapsed, next_delay=delay
                ) or not self._in_time(delay, operation, idempotency_key):
                    raise
                logger.info("%s: %s; retry %d in %.2f s", operation, error.message, failures, delay)
                self._sleep(delay)

    def _rotate(self, refused: str) -> bool:
        """After a 401 to ``refused``: whether a key other than it is in use now, read again
        from the key source if no other request has switched already."""
        if self._key_source is None:
            return False
        with self._key_lock:
            if self._key != refused:
                return True  # another worker met the 401 first and switched
            try:
                fresh = self._key_source()
            except CustomsBatchError:
                return False  # unreadable mid-rotation: the 401 stands
            if fresh == refused:
                return False
            self._key = fresh
            return True

    def _attempt(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: Mapping[str, object] | None,
        headers: Mapping[str, str],
        operation: str,
        key: str,
    ) -> JSON:
        try:
            outgoing = self._outgoing(method, path, params, body, headers, key)
        except (TypeError, ValueError, httpx.InvalidURL) as exc:
            # InvalidURL: a filter of 100,000 characters ("URL component 'query' too long")
            # was "internal error".
            raise NotSentError(
                f"the request could not be built ({operation}): {exc}", operation=operation
            ) from None
        if self.before_send is not None:
            self.before_send()
        exchange = self._watch(outgoing)
        started = time.perf_counter()
        try:
            response = self._send(outgoing)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            refused = _tls_failure(exc, operation, key)
            if refused is not None:
                raise refused from None
            raise NotSentError(
                f"cannot reach the service ({operation}): {redact(str(exc), key)}; "
                "nothing was sent",
                operation=operation,
                hint=f"{self._reach_hint}; nothing was sent",
            ) from None
        except httpx.TimeoutException as exc:
            raise ConnectionFailedError(
                f"no answer in time ({operation}): {type(exc).__name__}",
                operation=operation,
                hint="check the network, or raise the environment's timeouts",
            ) from None
        except httpx.TransportError as exc:
            raise ConnectionFailedError(
                f"cannot reach the service ({operation}): {redact(str(exc), key)}",
                operation=operation,
                hint=self._reach_hint,
            ) from None
        self.rate_limiter.release()  # the answer is in: the service counted the request
        self._log(outgoing, response, time.perf_counter() - started, key)
        payload = self._json(response, operation, key)
        if key and key.encode("ascii", "replace") in response.content:
            # The service quoted the key (an error echoing the Authorization header): what
            # is recorded, printed or raised holds *** instead.
            payload = _redacted(payload, key)
        if exchange is not None:
            exchange.status = response.status_code
            mrn = payload.get("mrn") if isinstance(payload, dict) else None
            exchange.mrn = mrn if isinstance(mrn, str) and mrn else None
            if not response.is_success:
                exchange.errors = _redacted(payload, key)
        if response.is_success:
            return payload
        raise error_for_status(
            response.status_code,
            payload,
            operation=operation,
            retry_after=response.headers.get("Retry-After"),
            secret=key,
        )

    def _outgoing(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: Mapping[str, object] | None,
        headers: Mapping[str, str],
        key: str,
    ) -> _Outgoing:
        """The request as httpx's client builds it: its default headers, then ``headers``
        and the key, the body as JSON; ValueError or TypeError when it cannot be built."""
        if self._http is not None:
            request = self._http.build_request(
                method,
                path,
                params=params,
                json=body,
                headers={**headers, "Authorization": f"Bearer {key}"},
            )
            return _Outgoing(method, request.url.path, request.content, request)
        if not _PLAIN_PATH.fullmatch(path):
            path = httpx.URL(path).raw_path.decode("ascii")  # percent-encoded as httpx does
        target = self._prefix + path.lstrip("/").encode("ascii")
        if params:
            target += b"?" + str(httpx.QueryParams(params)).encode("ascii")
        # ASCII, as httpx encodes header values: another character cannot be sent.
        sent = [*self._headers, *((k.encode(), v.encode("ascii")) for k, v in headers.items())]
        sent.append((b"Authorization", f"Bearer {key}".encode("ascii")))
        if body is not None:
            # As httpx encodes json=: compact, UTF-8, no NaN.
            content = json.dumps(
                body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode()
            sent.append((b"Content-Length", str(len(content)).encode()))
            sent.append((b"Content-Type", b"application/json"))
        else:
            content = b""
            if method in ("POST", "PUT", "PATCH"):
                sent.insert(1, (b"Content-Length", b"0"))  # after Host, where httpx puts it
        url = httpcore.URL(
            scheme=self._origin[0], host=self._origin[1], port=self._origin[2], target=target
        )
        return _Outgoing(
            method, unquote(target.partition(b"?")[0].decode("ascii")), content, url, sent
        )

    def _send(self, outgoing: _Outgoing) -> httpx.Response:
        """The answer to ``outgoing``, read whole."""
        if isinstance(outgoing.request, httpx.Request):
            assert self._http is not None
            return self._http.send(outgoing.request)
        assert self._wire is not None
        answer = self._wire.exchange(
            outgoing.method.encode("ascii"),
            outgoing.request,
            outgoing.headers,
            outgoing.body,
            self._timeouts,
        )
        # Made from the bytes, the answer is decoded as httpx decodes it (gzip, deflate).
        return httpx.Response(answer.status, headers=answer.headers, content=answer.content)

    def _watch(self, outgoing: _Outgoing) -> Exchange | None:
        exchanges: list[Exchange] | None = getattr(self._watched, "exchanges", None)
        if exchanges is None:
            return None
        body = outgoing.body
        digest = hashlib.sha256(body).hexdigest() if body else None
        exchange = Exchange(outgoing.method, outgoing.path, digest)
        exchanges.append(exchange)
        return exchange

    def _json(self, response: httpx.Response, operation: str, key: str) -> JSON:
        if not response.content:
            return None
        try:
            return json.loads(response.content)
        except ValueError:
            if response.is_success:
                raise UnexpectedResponseError(
                    f"the service's answer to {operation} is not JSON",
                    hint="check the environment's base_url: it may point at another server",
                ) from None
            return redact(response.text, key)

    def _log(self, outgoing: _Outgoing, response: httpx.Response, seconds: float, key: str) -> None:
        if not logger.isEnabledFor(logging.DEBUG):
            return
        request = outgoing.request
        if isinstance(request, httpx.Request):
            url, pairs = str(request.url), list(request.headers.items())
        else:
            url = f"{request.scheme.decode()}://{dict(outgoing.headers)[b'Host'].decode()}"
            url += request.target.decode()
            pairs = [(name.decode().lower(), value.decode()) for name, value in outgoing.headers]
        sent = {
            name: ("Bearer ***" if name.lower() == "authorization" else value)
            for name, value in pairs
        }
        line = (
            f"{outgoing.method} {url} -> {response.status_code} "
            f"({seconds * 1000:.0f} ms) request headers {sent}"
        )
        logger.debug(redact(line, key))


class _Outgoing:
    """A request about to leave: through httpx's client (``request`` an httpx.Request), or
    through the pools (``request`` its URL, ``headers`` as sent)."""

    __slots__ = ("body", "headers", "method", "path", "request")

    def __init__(
        self,
        method: str,
        path: str,
        body: bytes,
        request: httpx.Request | httpcore.URL,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        self.method = method
        self.path = path
        """The URL's path, decoded (what the history records)."""
        self.body = body
        self.request = request
        self.headers = headers or []


def _proxied_by_environment() -> bool:
    """Whether the environment names a proxy for the client (``HTTPS_PROXY``,
    ``HTTP_PROXY``, ``ALL_PROXY``, in either case), read as httpx reads it."""
    named = urllib.request.getproxies()
    return any(named.get(scheme) for scheme in ("http", "https", "all"))


def _tls_failure(exc: Exception, operation: str, key: str) -> TlsFailedError | None:
    """The error to raise when ``exc`` (a failed connection) failed because no secure
    connection could be made, a failure that sending again cannot mend; else None."""
    cause: BaseException | None = exc
    for _ in range(8):  # httpx's error, httpcore's, then the ssl module's
        if cause is None:
            return None
        if isinstance(cause, ssl.SSLCertVerificationError):
            reason = cause.verify_message or redact(str(cause), key)
            return TlsFailedError(
                f"the service's certificate is not trusted here ({operation}): {reason}; "
                "nothing was sent",
                operation=operation,
                hint="if your organisation signs the service's certificate (a private "
                "certificate authority, a proxy that inspects TLS), name that authority's "
                "certificate file in SSL_CERT_FILE (or a folder of them in SSL_CERT_DIR); "
                "otherwise check the environment's base_url: it may point at another server",
            )
        if isinstance(cause, ssl.SSLError) and cause.reason == "WRONG_VERSION_NUMBER":
            return TlsFailedError(
                f"the service does not answer in TLS ({operation}): its answer to the "
                "secure handshake is not TLS; nothing was sent",
                operation=operation,
                hint="check the environment's base_url: a server that speaks plain HTTP is "
                "reached with http://, not https://",
            )
        cause = cause.__cause__ or cause.__context__
    return None


def _redacted(value: JSON, key: str) -> JSON:
    """``value`` (parsed JSON) with ``key`` replaced by ``***`` in every string."""
    if isinstance(value, str):
        return redact(value, key)
    if isinstance(value, dict):
        return {redact(str(k), key): _redacted(v, key) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(item, key) for item in value]
    return value

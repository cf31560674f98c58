"""customs_batch.sensitive: which JSON text still holds a sensitive value in clear."""

from __future__ import annotations

import json

from customs_batch.sensitive import clear_value_pattern

DIGEST = (
    "hmac-sha256:9bb560cc:" + "2ab3b353241ef6dd799118a9bd0e0f9340e962d8c540c15254c1d0c0572a45e3"
)


def test_a_digest_after_a_spaced_colon_is_not_a_clear_value() -> None:
    """PostgreSQL prints a jsonb record as `"accessCode": "hmac-…"` (a space after the
    colon): the digest was taken for a clear value, so every locked command on a state in
    PostgreSQL wrote each departure's record again and moved the serial on, even one that
    was refused."""
    pattern = clear_value_pattern()
    for separators in ((", ", ": "), (",", ":"), (",", " :  ")):
        digested = json.dumps({"accessCode": DIGEST, "other": None}, separators=separators)
        assert pattern.search(digested.encode()) is None, digested
        clear = json.dumps({"accessCode": "1234"}, separators=separators)
        assert pattern.search(clear.encode()) is not None, clear
    assert pattern.search(b'{"accessCode": null}') is None

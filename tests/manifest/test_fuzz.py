"""Whatever bytes or text a file holds, loading returns a LoadResult and never raises."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from customs_batch.manifest import LoadResult, load_file

_SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_YAMLISH = st.sampled_from(
    [
        "apiVersion: customs-batch/v1\n",
        "kind: Movement\n",
        "metadata: {name: m}\n",
        "spec:\n",
        "  a: 1\n",
        "template: t1-road\n",
        "values: {office: DE1}\n",
        "  b: '{{ values.x }}'\n",
        "  c: ${ref:Movement/a.status}\n",
        "- &a [*a]\n",
        "---\n",
        "<<: *x\n",
        "\t",
        "{",
        "[",
        ": ",
        "!!binary ",
        "'",
    ]
)


@_SETTINGS
@given(data=st.binary(max_size=400))
def test_any_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(data)
    assert isinstance(load_file(path), LoadResult)


@_SETTINGS
@given(parts=st.lists(st.one_of(_YAMLISH, st.text(max_size=20)), max_size=25))
def test_any_yaml_like_text(tmp_path: Path, parts: list[str]) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text("".join(parts), encoding="utf-8", errors="surrogatepass")
    result = load_file(path)
    assert isinstance(result, LoadResult)
    assert all(f.message and f.hint for f in result.findings)

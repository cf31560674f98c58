"""docs/reliability.md from the figures of one run of the suite.

The page is written whole by ``make reliability``; the prose that does not come from the
figures (what is tested, the known limits) is here too, so that the page and the suite
cannot drift apart.
"""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

COMMAND = "make reliability"


def write_report(record: dict[str, Any], path: Path) -> None:
    """Write the page for ``record`` (the session's figures) to ``path``."""
    parts = [
        _head(record),
        _kills(record.get("kill_apply", [])),
        _server(record.get("kill_emulator", [])),
        _soak(record.get("fault_soak")),
        _concurrency(record.get("concurrency")),
        _disk(record.get("disk")),
        _hostile(record.get("hostile", [])),
        _secrets(record.get("secrets")),
        LIMITS,
        _never_sent(record.get("kill_apply", [])),
    ]
    path.write_text("\n".join(part for part in parts if part), encoding="utf-8")


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kb / 1024 / 1024:.0f} GB of memory"
    except (OSError, ValueError, IndexError):
        pass
    return (
        f"{os.cpu_count()} cores ({cpu}){memory}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def _head(record: dict[str, Any]) -> str:
    started = datetime.fromtimestamp(record["started"], UTC).strftime("%Y-%m-%d %H:%M UTC")
    loads = record.get("load", [])
    load = " to ".join(f"{value:.1f}" for value in loads) if loads else "(not measured)"
    return f"""# Reliability

What `{COMMAND}` measured: real `customs-batch` processes against a real `sandbox serve`
emulator, killed, faulted, raced, starved of disk and fed hostile input. Every figure below
comes from that run; the suite (`tests/reliability/`, marked `reliability`, left out of
`make test`) writes this page. The quick cases of the same faults run in `make test`
(`tests/e2e/`, `tests/cli/test_hostile_inputs.py`, `tests/cli/test_state_safety.py`).

- Run: {started}, `{COMMAND}` at commit {record.get("commit") or _commit()}, {record.get("seconds", 0):.0f} s in all.
- Machine: {_machine()}.
- Load: the machine was shared with other jobs; the 1-minute load average, sampled before
  each test, ranged from {load} (2 would be both cores busy).{_note(record)}

How to read the counts: a *duplicate* is an object the emulator holds twice for one
document (the same movement, departure or template group declared twice); *lost* is an
object the emulator created that no state record names; a *phantom* is a state record
naming an object the emulator does not hold. A *decision* is a departure whose submission
had an unknown outcome and which the emulator may have received, shown as *needs decision*
and resolved with `state adopt` (it was created) or `state forget` (it was not: sent
again); departures are the one kind the API offers no idempotency for. `apply` first looks
for such a departure among the transit declarations created since the attempt and submits
it again itself when none could be it, so a decision about a request the service *never
received* would be the tool's fault: that count must be 0.

Each audit also checks the history (docs/state.md, "History"): `history verify` passes (the
hash chain is unbroken), and every object the emulator holds (movement, departure, template
group) has in the history the request that created it under its address, with the answer
naming the ID the service gave, unless that answer never reached `apply` (*answer lost*: a
kill, a dropped connection; the ID was then recorded by `state adopt`, which writes no
history entry). Every other operation applied (deactivation, cancellation, party update)
has its request there too. An object or operation with no entry fails the suite.
"""


def _note(record: dict[str, Any]) -> str:
    note = record.get("note")
    return f"\n- Note: {note}" if note else ""


def _total(rows: list[dict[str, Any]], key: str) -> int:
    return sum(int(row.get(key, 0)) for row in rows)


def _kills(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "## kill -9 of apply\n\nNot run.\n"
    kills = [kill for row in rows for kill in row["kills"]]
    hit = [kill for kill in kills if kill["hit"]]
    backends = sorted({r.get("backend", "local") for r in rows})
    per_backend = ", ".join(
        f"{sum(1 for r in rows if r.get('backend', 'local') == b)} on {_BACKENDS.get(b, b)}"
        for b in backends
    )
    table = "\n".join(
        f"| {r['trial']} | {r.get('backend', 'local')} | {r['resources']} | "
        + ", ".join(
            f"{k['phase']} +{k['seconds']} s ({k['outcomes']} done)"
            + ("" if k["hit"] else ", after the end")
            for k in r["kills"]
        )
        + f" | {r['reruns']} | {r['duplicates']} | {r['lost']} | {r['phantoms']} | "
        f"{r['decisions']} | {r.get('decisions_forgotten', '')} | {r['decisions_never_sent']} | "
        f"{'yes' if r['converged'] else 'NO'} | {_history_cell(r.get('history'))} |"
        for r in rows
    )
    return f"""## kill -9 of apply at random instants

{len(rows)} trials ({per_backend}) of {rows[0]["resources"]} documents each: 220 movements (ISL and USL, on
three HAWBs and on the master AWB, in four lanes), 40 departure declarations, 20 template
groups, 10 party updates of those departures (`${{ref:...}}`), 10 HAWB deactivations and 10
export cancellations. Each trial starts `apply` and kills it with SIGKILL at a random
instant, twice (one kill in six while it starts up, loads and folds the last run's
journal; the others up to 8 s after it printed `Applying`, about a whole run), the emulator
answering 30 % of requests 0.2 s late to widen the windows; then re-runs `apply` until it
exits 0, resolving each needs-decision departure by what the emulator holds.

| totals | |
|---|---|
| trials, documents | {len(rows)}, {_total(rows, "resources")} |
| kills that struck a running apply | {len(hit)} of {len(kills)} |
| duplicates | **{_total(rows, "duplicates")}** |
| lost outcomes | **{_total(rows, "lost")}** |
| phantoms | **{_total(rows, "phantoms")}** |
| manual decisions | {_total(rows, "decisions")} |
| of which the emulator does not hold the departure (forgotten) | {_total(rows, "decisions_forgotten")} |
| of which the request never reached the emulator | **{_total(rows, "decisions_never_sent")}** |
| trials that ended with `plan` showing no changes | {sum(1 for r in rows if r["converged"])} of {len(rows)} |
{_history_totals([r.get("history") for r in rows])}

| trial | state | documents | kills (phase, delay, outcomes printed before) | re-runs | dup. | lost | phantoms | decisions | forgotten | never sent | done | history: verified, objects named / answer lost / missing, operations |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
{table}
"""


_BACKENDS = {"local": "a local state (files)", "postgres": "a PostgreSQL state"}


def _missing(history: dict[str, Any]) -> int:
    return int(history["objects"]) - int(history["named"]) - int(history["answer_lost"])


def _history_cell(history: dict[str, Any] | None) -> str:
    if not history:
        return "not checked"
    return (
        f"{'yes' if history['verified'] else 'NO'}, {history['named']} / "
        f"{history['answer_lost']} / {_missing(history)}, {history['operations']}"
    )


def _history_totals(histories: list[dict[str, Any] | None]) -> str:
    """The history rows of a totals table."""
    checked = [h for h in histories if h]
    if not checked:
        return "| history | not checked |"

    def total(key: str) -> int:
        return sum(int(h[key]) for h in checked)

    return f"""| history: trials where `history verify` passed | {sum(1 for h in checked if h["verified"])} of {len(checked)} |
| history entries (requests with their answers, record-only operations) | {total("entries")} |
| objects the emulator holds | {total("objects")} |
| of which the history names with the ID the service gave | {total("named")} |
| of which only the request is kept (its answer never reached apply) | {total("answer_lost")} |
| of which the history has no entry | **{sum(_missing(h) for h in checked)}** |
| other operations applied (deactivations, cancellations, party updates) | {total("operations")} |
| of which with their answer in the history / only their request / no entry | {total("operations_named")} / {total("operations_answer_lost")} / **{total("operations") - total("operations_named") - total("operations_answer_lost")}** |"""


def _never_sent(rows: list[dict[str, Any]]) -> str:
    never = _total(rows, "decisions_never_sent")
    forgotten = _total(rows, "decisions_forgotten")
    received = _total(rows, "departure_posts_received")
    created = _total(rows, "departures_created")
    head = "- **A killed apply and a departure.**"
    if never:
        head = "- **A killed apply and a departure: the target of 0 is not met.**"
    return f"""{head} Before it asks, `apply` looks for a departure whose submission
  was lost among the transit declarations created since the attempt, and submits it again
  itself when none could be it: the request never arrived, or arrived and was dropped
  unread (the emulator received {received} departure submissions in these trials and
  created {created}: when the client vanishes before the emulator has read the body,
  uvicorn hands the application a disconnect instead of it). Decisions left about
  departures the emulator does not hold (`state forget`, then sent again): {forgotten}, of
  which about requests that never reached the emulator at all: **{never}**.
"""


def _server(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "## kill -9 of the emulator\n\nNot run.\n"
    table = "\n".join(
        f"| {r['trial']} | {r['resources']} | {r['killed_after_seconds']} s | "
        f"{r['interrupted_run_exit']} | {r['reruns']} | {r['duplicates']} | {r['lost']} | "
        f"{r['phantoms']} | {r['decisions']} | {'yes' if r['converged'] else 'NO'} | "
        f"{_history_cell(r.get('history'))} |"
        for r in rows
    )
    return f"""## kill -9 of the emulator mid-apply

{len(rows)} trials: the same batch of every kind; `sandbox serve --db FILE` is killed with
SIGKILL a random 0.3 to 4 s after `apply` printed `Applying`, and restarted at once on the
same port and the same SQLite file. The running apply carries on through its retries (or
ends with exit 1, what it could not send recorded as not sent or unknown), then `apply` is
re-run until it exits 0.

Totals: duplicates **{_total(rows, "duplicates")}**, lost **{_total(rows, "lost")}**,
phantoms **{_total(rows, "phantoms")}**, decisions {_total(rows, "decisions")}, of which
{_total(rows, "decisions_never_sent")} about departures the emulator did not create: it was
killed holding their requests, before it carried them out (the apply saw the connection
reset: sent, outcome unknown, so it asked).

| trial | documents | killed after | exit of the interrupted apply | re-runs | dup. | lost | phantoms | decisions | done | history: verified, objects named / answer lost / missing, operations |
|---|---|---|---|---|---|---|---|---|---|---|
{table}

| history, all trials | |
|---|---|
{_history_totals([r.get("history") for r in rows])}
"""


def _soak(soak: dict[str, Any] | None) -> str:
    if not soak:
        return "## Fault soak\n\nNot run.\n"
    return f"""## Fault soak

{soak["resources"]} documents of every kind, against an emulator started with
`--faults {soak["faults"]}`: half of all requests fail, each way at 10 %: a 503 before the
effect, a 503 after it (the object is created, the client is told it failed), a connection
dropped before and after the effect, a spurious 429 with `Retry-After: 1`, and 10 % answered
0.2 s late. `apply` re-runs until it exits 0, the needs-decision departures resolved between
runs by what the emulator holds.

| | |
|---|---|
| documents | {soak["resources"]} |
| requests the emulator received | {soak["requests"]} |
| apply runs until done | {soak["runs"]} |
| duplicates | **{soak["duplicates"]}** |
| lost outcomes | **{soak["lost"]}** |
| phantoms | **{soak["phantoms"]}** |
| decisions: departures created after all (adopted) | {soak["decisions_adopted"]} |
| decisions: departures the service never created (forgotten, sent again) | {soak["decisions_forgotten"]} |
| `plan` shows no changes at the end | {"yes" if soak["converged"] else "NO"} |
{_history_totals([soak.get("history")])}
{_soak_completeness(soak)}

The forgotten ones here are departures whose request was refused by an injected 503 or
dropped connection *before* any effect: the client cannot tell that from a failure after
the effect, so it asks. None of them can be a request that never left: no process is
killed in the soak, and a request that could not be sent (connection refused) is recorded
as not sent and sent again by the next run, without a decision.
"""


def _soak_completeness(soak: dict[str, Any]) -> str:
    history = soak.get("history")
    lines = []
    if history and "writes_received" in soak:
        lines.append(
            "| requests that change something: counted by the emulator's handlers (a fault "
            "injected before the handler is not counted) / kept in the history's answers "
            f"(each retry and each failed attempt too; must be at least as many) | "
            f"{soak['writes_received']} / "
            f"{history['write_exchanges']} |"
        )
    if "notifications" in soak:
        lines.append(
            f"| end-of-run notifications received by a local webhook (one per run) / naming "
            f"a decision | {soak['notifications']} / {soak['notifications_naming_a_decision']} |"
        )
        lines.append(f"| the last one's title | {_cell(soak['last_notification'])} |")
    return "\n".join(lines)


def _concurrency(found: dict[str, Any] | None) -> str:
    if not found:
        return "## Concurrent applies and force-unlock\n\nNot run.\n"
    return f"""## Concurrent applies and force-unlock

{found["rounds"]} rounds on one state and one emulator, each adding documents: two `apply`
processes start together; the emulator's gate holds the first request of whichever took
the lock, and while it is held `force-unlock ID` and `force-unlock ID --force` are tried
against that live holder. With `--lock-timeout 0` the second apply is refused (exit 3,
naming the holder) and is run again afterwards; with a long timeout it waits its turn.

| | |
|---|---|
| second apply refused at once, naming the holder | {found["second_apply_refused"]} |
| second apply waited for the lock, then ran | {found["second_apply_waited_then_ran"]} |
| force-unlock attempts against a live holder, all refused (exit 3) | {found["force_unlock_refused"]} |
| documents at the end | {found["resources"]} |
| duplicates / lost / phantoms | **{found["duplicates"]}** / **{found["lost"]}** / **{found["phantoms"]}** |
"""


def _disk(found: dict[str, Any] | None) -> str:
    if not found:
        return "## Disk full, read-only state folder\n\nNot run.\n"
    if found.get("mode") == "injected":
        how = f"""The state folder (`.customs-batch/`) is a disk of {found["tmpfs"]}B with the write
errors injected into each `customs-batch` process the suite runs (`RELIABILITY_DISK=injected`,
or no root to mount a tmpfs): a small `sitecustomize` of the tests makes the process's own
writes under that folder fail as a tmpfs of that size would (ENOSPC past it, a short write
first; EROFS for every change once "read-only"). `apply` of {found["resources"]} documents fills it:"""
        grow, ro, rw = "given 64 MB", "made read-only", "Made writable again"
    else:
        how = f"""The state folder (`.customs-batch/`) is a tmpfs of {found["tmpfs"]}B, mounted by the suite
(it runs as root; `RELIABILITY_DISK=injected` runs the same scenario with injected write
errors instead). `apply` of {found["resources"]} documents fills it:"""
        grow, ro, rw = "made 64 MB", "remounted read-only", "Remounted read-write"
    return f"""## Disk full, read-only state folder

{how}

    {found["disk_full_error"]}

Exit 3, no traceback, after {found["outcomes_before_full"]} outcomes; `state list` still
loads the state. The folder is then {grow} and `apply` re-run: done in
{found["reruns_after_full"]} run(s), with {found["decisions_after_full"]} decision(s)
(about requests never sent: {found["decisions_never_sent_after_full"]}). Then, with more
documents to apply, the folder is {ro}:

    {found["read_only_error"]}

Exit 3, nothing sent (the emulator's movement count unchanged), `plan` still works (exit 2,
changes). {rw}, `apply` finishes in {found["reruns_after_read_only"]} run(s).
At the end: duplicates **{found["duplicates"]}**, lost **{found["lost"]}**, phantoms
**{found["phantoms"]}**, `plan` shows no changes: {"yes" if found["converged"] else "NO"}.
"""


def _hostile(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "## Hostile inputs\n\nNot run.\n"
    table = "\n".join(
        f"| {_cell(r['case'])} | `{r['command']}` | {r['exit'] if r['exit'] is not None else 'killed'} | "
        f"{r['peak_mb']:.0f} MB | {r['seconds']:.1f} s | `{_cell(r['first_line'])}` |"
        for r in rows
    )
    worst_memory = max(r["peak_mb"] for r in rows)
    worst_time = max(r["seconds"] for r in rows)
    return f"""## Hostile inputs

Each case runs `customs-batch validate` (or `plan`) as a subprocess with its address space
limited to 1 GiB (`RLIMIT_AS`) and killed after 30 s; its peak resident memory is read from
`wait4`. Each must end in a finding or a clear error (exit 1, or 3 for the state file), with
no traceback and no "internal error". Worst case: {worst_memory:.0f} MB, {worst_time:.1f} s.

| case | command | exit | peak RSS | time | first error line |
|---|---|---|---|---|---|
{table}
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def _secrets(found: dict[str, Any] | None) -> str:
    if not found:
        return "## Secrets\n\nNot run.\n"
    where = ", ".join(found["found"]) if found["found"] else "nowhere"
    tables = found.get("table_rows_searched", {})
    rows = ", ".join(f"`{name}` {count}" for name, count in sorted(tables.items()))
    sought = found.get("searched_for", {})
    kinds = found.get("files_by_kind", {})
    files = "\n".join(f"| {kind} | {count} |" for kind, count in sorted(kinds.items()))
    return f"""## Secrets

{found["commands"]} commands, on three projects: a local state, a PostgreSQL state whose URL
carries a password (with a rate limit, which the database shares), both against a
`sandbox serve` emulator, and the local environment (the built-in emulator, its data in the
state folder). On each: validate in every format to a file, an apply killed mid-run, plan
to a file, apply of it and `--auto-approve` with `--verbose` and `--format json`, refresh,
`state list`, `state show`, `status` (text and JSON), plan in every format to a file,
`render`, `get` in every format to a file, `history` in every format and `history verify`,
`state pull`; every command with `GITHUB_STEP_SUMMARY` set. On the PostgreSQL state also an
apply killed while the emulator held its requests, and `plan` with a wrong password and with
nobody listening. Each departure's guarantee has an access code of its own.

Searched for: the API key, the PostgreSQL password and {sought.get("access code", 0)} guarantee
access codes (every one the manifests used), in {found["outputs_searched"]} outputs (stdout
and stderr), {found["files_searched"]} files ({found["bytes_searched"]:,} bytes; a file read
several times, right after each killed run and at the end, counts once), the emulators'
{found.get("emulator_rows_searched", 0)} records read as rows, and every row of every table of
the state database, read as text twice (while an apply held the lock with requests under
way, the emulator's gate holding them, and at the end); rows per table, the larger of the two
readings: {rows}.

| files searched | |
|---|---|
{files}

Found: **{where}** ({len(found["found"])} places).
"""


LIMITS = """## Known limits

- **The lock-break window.** A run checks that its lock is still its own (two `stat`
  calls) right before each request leaves, after any wait for the rate limit and any
  backoff before a retry. A lock broken by `force-unlock --force` from another machine in
  the microseconds *between* that check and the write to the socket lets that one request
  out; its intent is already in the journal, so the next run resolves it like any request
  whose answer was lost (a movement is replayed by its Idempotency-Key, a departure shows
  as needs decision). Closing it entirely would need the service to take part (a fencing
  token it checks). The window opens only for a state folder shared between machines:
  on one machine `force-unlock` refuses a live holder, with or without `--force` (the
  concurrency figures above).
"""

"""Notifications at the end of an apply, through Apprise: a webhook, Slack, Teams, e-mail…

An environment's ``notify:`` block names the variable that holds the Apprise URLs and says
when to send (``rejection``, ``needs-decision``, ``end``). A run sends at most one message,
to every URL: which environment, how the run ended, the addresses customs rejected and those
whose outcome is unknown (the first 20 of each and a count), what to run next, and the CI
run when there is one. The URLs carry the services' tokens, so they come only from the
variable and are never printed: a notification that cannot be delivered is a warning naming
the service, and changes nothing else (the run is recorded, its exit code is its own).
Apprise is imported only when a message is sent.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from customs_batch.environments import NotifyOn, NotifySettings
from customs_batch.execution.scheduler import NodeStatus
from customs_batch.planning.model import Action

if TYPE_CHECKING:
    from customs_batch.commands.apply import ApplyResult

LISTED = 20
"""How many addresses of each list a message names; the rest are counted."""

DEADLINE_SECONDS = 8.0
"""How long one URL's delivery may take in all: Apprise's 4 s to connect and 4 s to answer.

Apprise's timeouts are per socket operation: a service that trickles its answer a byte at a
time would hold the run for ever. A delivery still going at its deadline is given up (its
thread, a daemon, is left behind and ends with the process) and is the undelivered warning.
"""

# A comma separates two URLs only where the next one starts: Apprise URLs may hold commas
# of their own (several recipients of one e-mail).
_SEPARATOR = re.compile(r"\s+|,+\s*(?=[A-Za-z][A-Za-z0-9+.-]*://)")


@dataclass(frozen=True)
class Message:
    """One notification: its title, its text, and whether it reports a problem."""

    title: str
    body: str
    problem: bool


def split_urls(value: str) -> list[str]:
    """The notification URLs in a variable's value: separated by spaces or commas."""
    return [url.strip(",") for url in _SEPARATOR.split(value) if url.strip(",")]


def rejected_addresses(result: ApplyResult) -> list[str]:
    """What customs rejected: this run's outcomes in one of their kind's rejected states (a
    departure ``invalid`` or in ``error``, a cancellation refused), and what the plan found
    rejected already (the run could not go on with it)."""
    found = [
        str(change.address) for change in result.plan.changes if change.action is Action.REJECTED
    ]
    if result.report is not None:
        found += [
            f"{outcome.address} ({outcome.remote_status})"
            for outcome in result.report.outcomes
            if outcome.rejected
        ]
    return found


def events_of(result: ApplyResult) -> set[NotifyOn]:
    """What happened in the run, in the words of ``notify.on``."""
    happened = {NotifyOn.END}
    if rejected_addresses(result):
        happened.add(NotifyOn.REJECTION)
    if result.undecided or result.not_found:
        happened.add(NotifyOn.NEEDS_DECISION)
    return happened


def compose(result: ApplyResult, environ: Mapping[str, str]) -> Message:
    """The message of a run: what happened, to what, and what to do."""
    name = result.environment.name
    rejected = rejected_addresses(result)
    undecided = list(result.undecided)
    not_found = list(result.not_found)
    problems = []
    if rejected:
        problems.append(f"{len(rejected)} rejected by customs")
    if undecided:
        verb = "needs" if len(undecided) == 1 else "need"
        problems.append(f"{len(undecided)} {verb} a decision")
    if not_found:
        problems.append(f"{len(not_found)} no longer found at the service")
    ending = _ending(result)
    title = f"customs-batch apply on {name}: " + (", ".join(problems) or ending)
    lines = [f"Environment: {name}", f"Ended: {ending} (exit code {int(result.exit_code)})"]
    if result.report is not None:
        counts = ", ".join(f"{result.report.count(s)} {s.value}" for s in NodeStatus)
        lines.append(f"Operations: {counts}")
    lines += _listed("Rejected by customs", rejected)
    lines += _listed("Outcome unknown, needs a decision", undecided)
    lines += _listed("No longer found at the service, needs a decision", not_found)
    lines += ["", "What to do:", *_what_to_do(result, rejected, undecided)]
    ci_run = _ci_run(environ)
    if ci_run:
        lines += ["", f"CI run: {ci_run}"]
    return Message(title, "\n".join(lines), bool(problems) or result.exit_code != 0)


def notify(
    result: ApplyResult,
    warn: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
    *,
    deadline: float | None = None,
) -> None:
    """Send the run's notification when the environment asks for one on what happened.

    Never raises and never changes the result: what cannot be sent is a warning. Each URL's
    delivery ends within ``deadline`` seconds (by default DEADLINE_SECONDS), delivered or not.
    """
    settings = result.environment.notify
    if settings is None or not (settings.on & events_of(result)):
        return
    environ = os.environ if environ is None else environ
    urls = split_urls(environ.get(settings.urls_env, ""))
    if not urls:
        warn(
            f"warning: no notification sent: ${settings.urls_env} (notify.urls_env of "
            f"environment {result.environment.name}) is not set or empty"
        )
        return
    message = compose(result, environ)
    try:
        # Apprise loads its plugins when first asked, some of which import modules Python
        # says are deprecated (imghdr): not the user's concern.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            _deliver(urls, message, settings, warn, deadline or DEADLINE_SECONDS)
    except Exception as exc:  # Apprise failed outside a service (cannot be loaded, say)
        # Its type only: the text of an error from deep in a plugin may quote a URL.
        warn(f"warning: no notification sent: {type(exc).__name__} in Apprise")


def _deliver(
    urls: Sequence[str],
    message: Message,
    settings: NotifySettings,
    warn: Callable[[str], None],
    deadline: float,
) -> None:
    # Imported here: Apprise and its plugins take about a second to load, and only a
    # run that sends a notification needs them.
    import apprise

    # Nothing of a run is kept on disk by Apprise's persistent store.
    asset = apprise.AppriseAsset(
        app_id="customs-batch", app_desc="customs-batch", storage_mode="memory"
    )
    kind = apprise.NotifyType.FAILURE if message.problem else apprise.NotifyType.SUCCESS
    for place, url in enumerate(urls, 1):
        where = f"URL {place} of ${settings.urls_env}"
        service = apprise.Apprise.instantiate(url, asset=asset)
        if service is None:
            scheme = url.split("://", 1)[0] if "://" in url else ""
            known = (
                f" ({scheme}://)" if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]{0,20}", scheme) else ""
            )
            warn(f"warning: {where} is not a notification URL Apprise knows{known}: not sent")
            continue
        name = service.service_name or "the service"
        # Bound now: the thread may outlive this turn of the loop.
        send = functools.partial(
            service.notify, body=message.body, title=message.title, notify_type=kind
        )
        sent = _within(deadline, send)
        if not sent:
            late = "" if sent is not None else f" (no answer within {deadline:g} s)"
            warn(
                f"warning: the notification to {name} ({where}) could not be delivered{late}; "
                "the run is recorded and its exit code is unchanged"
            )


def _within(seconds: float, send: Callable[[], object]) -> bool | None:
    """What ``send`` returned (False when it raised), or None when it was not over in time.

    It runs in a daemon thread the run does not wait for beyond ``seconds``: a service that
    answers too slowly never holds the process.
    """
    outcome: list[bool] = []

    def attempt() -> None:
        # Whatever goes wrong in a plugin, a notification never costs the run anything.
        try:
            outcome.append(bool(send()))
        except Exception:
            outcome.append(False)

    thread = threading.Thread(target=attempt, name="customs-batch-notify", daemon=True)
    thread.start()
    thread.join(seconds)
    return outcome[0] if outcome else None


def _ending(result: ApplyResult) -> str:
    report = result.report
    if report is None:
        return {
            "nothing-to-do": "nothing to apply",
            "cancelled": "cancelled",
            "too-large": "stopped by the large-change guard, nothing sent",
        }[result.status.value]
    if report.fatal is not None:
        return "stopped by an error"
    if report.stopped:
        return "interrupted"
    if report.out_of_time is not None:
        return "time budget used up"
    return "done" if report.ok else "finished with failures"


def _listed(heading: str, addresses: Sequence[str]) -> list[str]:
    if not addresses:
        return []
    lines = ["", f"{heading} ({len(addresses)}):"]
    lines += [f"  {address}" for address in addresses[:LISTED]]
    if len(addresses) > LISTED:
        lines.append(f"  … and {len(addresses) - LISTED} more")
    return lines


def _what_to_do(
    result: ApplyResult, rejected: Sequence[str], undecided: Sequence[str]
) -> list[str]:
    env = f"--env {result.environment.name}"
    steps: list[str] = []
    if rejected:
        steps.append(
            f"- `customs-batch status {env}` shows each rejected object with the service's "
            f"errors, and `customs-batch plan {env}` the way out: correct a rejected "
            "departure and apply again (it is submitted again, replacing it); "
            f"`customs-batch state rm ADDRESS {env}` stops tracking one"
        )
    noted = [address for address in undecided if address in result.another_at_id]
    if len(noted) < len(undecided):
        steps.append(
            f"- `customs-batch plan {env}` says what is known of each unknown outcome. "
            f"`customs-batch apply {env}` looks at the service first and sends again what is "
            f"safe to send again; for the rest decide: `customs-batch state adopt ADDRESS ID "
            f"{env}` if the service made it, `customs-batch state forget ADDRESS {env}` if it "
            "did not"
        )
    if noted:
        steps.append(
            f"- {_some(noted, len(undecided))} an update whose answer was lost, and the "
            "service no longer holds its object, or holds another object at its ID: "
            f"`customs-batch plan {env}` says which. Adopting is refused (an update creates "
            f"no object): `customs-batch state forget ADDRESS {env}` if its object is gone "
            "(the next apply sends its document as new); if the object at its ID is its own, "
            f"changed there, `customs-batch state forget ADDRESS {env}`, then `customs-batch "
            f"import ADDRESS ID {env}`"
        )
    if result.not_found:
        steps.append(
            "- `customs-batch refresh` found those no longer at the service: once you have "
            "confirmed one gone, `customs-batch state rm --gone ADDRESS` removes its record "
            "(the next apply sends it again); if the service should still hold it, check "
            f"the environment, then `customs-batch refresh {env}` reads it again"
        )
    if result.message:
        steps.append(f"- {result.message}")
    return steps or ["- nothing"]


def _some(noted: Sequence[str], undecided: int) -> str:
    """Who the words for a lost update found another object are about."""
    if len(noted) == undecided:
        return "Each of those with an unknown outcome is" if undecided > 1 else "It is"
    listed = ", ".join(noted[:LISTED]) + (" …" if len(noted) > LISTED else "")
    return f"{listed}: {'each is' if len(noted) > 1 else 'is'}"


def _ci_run(environ: Mapping[str, str]) -> str | None:
    """The GitHub Actions run this apply is part of, when it is one."""
    parts = [environ.get(name, "") for name in _GITHUB]
    if not all(parts):
        return None
    server, repository, run_id = parts
    return f"{server.rstrip('/')}/{repository}/actions/runs/{run_id}"


_GITHUB = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")

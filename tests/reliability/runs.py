"""Re-running apply until it is done, counting the decisions a person had to make."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tests.e2e.conftest import Project
from tests.e2e.recovery import resolve_departures

ASKED = re.compile(
    r"^(DepartureDeclaration/\S+): the last submission (?:may have been|was) received", re.M
)
"""What apply says of a departure it leaves to a person (``execution/settle.py``): one that
may have been received (created since, with the same values), or one whose answer the
history holds."""


@dataclass
class Runs:
    """The runs it took, and the needs-decision addresses resolved between them."""

    runs: int = 0
    adopted: int = 0
    """Decisions on a request the service did carry out (the object was adopted)."""
    forgotten: int = 0
    """Decisions on a request the service never carried out (forgotten, sent again)."""
    history: list[str] = field(default_factory=list)

    @property
    def decisions(self) -> int:
        return self.adopted + self.forgotten


def apply_until_done(project: Project, *, runs: int = 6, timeout: float = 300) -> Runs:
    """Apply until it exits 0, resolving between the runs the needs-decision departures that
    apply asked about."""
    done = Runs()
    for _ in range(runs):
        done.runs += 1
        result = project.run("apply", "--auto-approve", timeout=timeout)
        done.history.append(f"exit {result.returncode}\n{result.stdout[-3000:]}{result.stderr}")
        if result.returncode == 0:
            return done
        assert result.returncode == 1, done.history[-1]
        # Only what apply asked a person to decide: a departure whose outcome became unknown
        # in this run is looked for by the next one, which sends it again itself when the
        # service never received it.
        asked = set(ASKED.findall(result.stderr))
        for command in resolve_departures(project, only=asked):
            done.history.append(command)
            if command.startswith("state adopt"):
                done.adopted += 1
            else:
                done.forgotten += 1
    raise AssertionError("apply did not finish:\n" + "\n".join(done.history))

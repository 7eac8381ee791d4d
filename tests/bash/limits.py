"""What the bash limit tests assert of a run a limit stopped (shared by their files)."""

from __future__ import annotations

from jazzmine.bash import BashResult
from jazzmine.bash.events import bash_final_events
from jazzmine.sandbox import Outcome


def assert_stopped_by_a_limit(result: BashResult) -> None:
    """The run failed, and both its error and its error event say a limit stopped it."""
    assert result.exit_code != 0, result
    assert "limit" in (result.error or ""), result
    events = dict(bash_final_events(result))
    assert "limit" in events["error"]["message"], events
    assert events["exit"]["outcome"] != Outcome.RESULT.value

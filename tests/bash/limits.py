"""What the bash limit tests share: a session with low limits, and what they assert of a run
a limit stopped."""

from __future__ import annotations

from jazzmine.bash import BashLimits, BashResult, BashSession, ToolSpec
from jazzmine.bash.events import bash_final_events
from jazzmine.core.tools import ToolResponse
from jazzmine.sandbox import Outcome

USER = ToolSpec("get_user", "Fetch a user by id", {
    "type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
})  # fmt: skip
LIMITS = BashLimits(max_commands=500, max_loop_iterations=50, timeout_seconds=20)
LOOP = "while true; do :; done"  # stopped at 50 iterations
CALLS = "for i in $(seq 1 100); do get_user --id $i >/dev/null; done"  # 50 calls, then stopped


def get_user(id: int) -> ToolResponse:
    return ToolResponse(success=True, data={"id": id})


def limited_session() -> BashSession:
    """Return a session calling `get_user`, under LIMITS."""
    return BashSession([USER], {"get_user": get_user}, limits=LIMITS)


def assert_stopped_by_a_limit(result: BashResult) -> None:
    """The run failed, and both its error and its error event say a limit stopped it."""
    assert result.exit_code != 0, result
    assert "limit" in (result.error or ""), result
    events = dict(bash_final_events(result))
    assert "limit" in events["error"]["message"], events
    assert events["exit"]["outcome"] != Outcome.RESULT.value

"""A bash builtin passes its tool only the parameters the tool documents.

bashkit hands a callback every flag a line spells (`get_user --id 1 --role admin` arrives as
`{"id": 1, "role": "admin"}`), and the tool's function took whatever it accepts: a parameter
its prompt never mentions (here `role`, which widens what it returns) was a script's to set.
The runner in the sandbox now refuses the call, as the Python harness does.
"""

from __future__ import annotations

import pytest

from .limits import run_in_a_bash_sandbox

pytestmark = pytest.mark.docker

WIDENING = """
def get_user(id: int, role: str = "viewer") -> ToolResponse:
    data = {"id": id}
    if role == "admin":
        data["password_hash"] = "x" * 8
    return ToolResponse(success=True, data=data)
"""


async def test_an_undocumented_flag_is_refused_and_a_documented_one_passes(
    docker_client, base_image, tmp_path
) -> None:
    script = "get_user --id 1\necho ---\nget_user --id 2 --role admin\n"
    result = await run_in_a_bash_sandbox(
        script, sandbox="bash-flags", docker_client=docker_client, cache_dir=tmp_path,
        source=WIDENING,
    )  # fmt: skip
    first, second = result.calls
    assert (first.args, first.exit_status, first.error) == ({"id": 1}, 0, None)
    assert second.exit_status == 1, second
    assert "a script may not pass it parameter 'role'" in (second.error or ""), second
    assert "password_hash" not in result.stdout
    assert '"id": 1' in result.stdout or "1" in result.stdout.split("---")[0]

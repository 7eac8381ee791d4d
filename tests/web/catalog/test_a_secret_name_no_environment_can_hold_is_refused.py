"""A secret's name is an environment variable's name (letters, digits and '_', not starting
with a digit), however it arrives: a sandbox, a `.py` import, the tool form or a tool.json.

Every secret reaches the sandbox as an environment variable (`os.environ.update` in the
harness, `subprocess.run(env=...)` in a script tool's runner). `A=B` was stored, listed for a
value, and then no environment could take it: Python refuses it ("illegal environment variable
name"), so every run of the sandbox would fail, far from the save that let it in. A name with
a space, a line break or a leading digit was stored too, which no shell reads as a variable.
Nor may a secret take a name the sandbox's own programs read (`PATH`, `LD_PRELOAD`, `HOME`...):
its value would steer them.
"""

from __future__ import annotations

import os

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import sandbox_create, script_tool_save, tools_import
from tests.web.helpers import script_tools_zip_post, source_file

pytestmark = pytest.mark.django_db

# {case: a secret's name that no environment variable can have}
BAD = {
    "an equals sign": "A=B",
    "a space": "MY KEY",
    "a line break": "API\nKEY",
    "a leading digit": "9LIVES",
    "a dash": "API-KEY",
    "a letter beyond ASCII": "CLÉ",
}
# {case: a name an environment can hold, but one the sandbox's own programs read}
RESERVED = {
    "the program path": "PATH",
    "a preloaded library": "LD_PRELOAD",
    "python's module path": "PYTHONPATH",
    "python's start-up file, lower case": "pythonstartup",
    "node's options": "NODE_OPTIONS",
    "bash's start-up file": "BASH_ENV",
    "a call's home": "HOME",
    "a call's temporary directory": "TMPDIR",
    "a call's home, lower case": "home",
    "the harness's own switch": "JAZZMINE_HARNESS_SHARED_MACHINE",
    "the C library's converters, which it loads": "GCONV_PATH",
    "the C library's tunables": "GLIBC_TUNABLES",
    "the C library's locales, lower case": "locpath",
    "the allocator's switches": "MALLOC_ARENA_MAX",
}
PING = "def ping(host: str) -> ToolResponse:\n    return ToolResponse(success=True)\n"


def test_python_itself_refuses_the_equals_sign_as_a_variable_name() -> None:
    """Why this matters: what the harness does with every secret of a run."""
    with pytest.raises(ValueError, match="illegal environment variable name"):
        os.environ.update({BAD["an equals sign"]: "value"})


@pytest.mark.parametrize("case", BAD)
def test_a_sandbox_refuses_it_naming_the_secret(team, case: str) -> None:
    name = BAD[case]
    with pytest.raises(ValidationError) as refused:
        sandbox_create(team=team, name="shop", secrets=["SHOP_KEY", name])
    message = " ".join(refused.value.messages)
    assert "secrets[1]" in message and "environment variable" in message, message
    assert not Sandbox.objects.exists()


@pytest.mark.parametrize("case", BAD)
def test_a_py_import_refuses_it_and_imports_nothing(team, user, case: str) -> None:
    text = f"@tool(description='Ping.', sandbox='s', secrets={[BAD[case]]!r})\n{PING}"
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("ping.py", text)], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert "environment variable" in problem, problem
    assert not Tool.objects.exists() and not Sandbox.objects.exists()


@pytest.mark.parametrize("case", BAD)
def test_a_script_tool_refuses_it(empty_sandbox, case: str) -> None:
    tool = ScriptTool(
        name="echo", description="Echo the input back for tests.", source="print('{}')\n",
        secrets=[BAD[case]],
    )  # fmt: skip
    with pytest.raises(ValidationError, match="environment variable"):
        script_tool_save(sandbox=empty_sandbox, tool=tool)
    assert not Tool.objects.exists()


def test_the_tool_form_answers_422(admin, empty_sandbox) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
        {"name": "ping", "description": "Ping.", "kind": "python", "source": PING,
         "secrets": "SHOP_KEY\nA=B"},
    )  # fmt: skip
    assert response.status_code == 422
    assert "'A=B'" in " ".join(response.context["form"].non_field_errors())
    assert not Tool.objects.exists()


def test_a_tool_json_import_answers_422_and_imports_nothing(admin, empty_sandbox) -> None:
    good = {"name": "echo", "description": "Echo the input back for tests.",
            "parameters": {"type": "object", "properties": {}}}  # fmt: skip
    response = script_tools_zip_post(
        admin, empty_sandbox, good, {**good, "name": "leak", "secrets": ["A=B"]}
    )
    assert response.status_code == 422
    assert "leak: secrets[0]" in response.content.decode()
    assert not Tool.objects.exists()  # not even the good one


@pytest.mark.parametrize("name", ["SHOP_KEY", "api_key", "_PRIVATE", "K2"])
def test_names_an_environment_takes_are_still_accepted(team, name: str) -> None:
    sandbox = sandbox_create(team=team, name="shop", secrets=[name])
    assert sandbox.secrets == [name]


@pytest.mark.parametrize("case", RESERVED)
def test_a_name_the_sandboxs_own_programs_read_is_refused(team, case: str) -> None:
    with pytest.raises(ValidationError) as refused:
        sandbox_create(team=team, name="shop", secrets=[RESERVED[case]])
    message = " ".join(refused.value.messages)
    assert "secrets[0]" in message and "the sandbox's own programs read" in message, message
    assert not Sandbox.objects.exists()


@pytest.mark.parametrize(
    "name", ["SHOP_API_KEY", "PATHFINDER_TOKEN", "home_api_key", "_X", "HTTPS_PROXY", "AWS_KEY"]
)
def test_names_that_only_begin_alike_are_kept(team, name: str) -> None:
    sandbox = sandbox_create(team=team, name="shop", secrets=[name])
    assert sandbox.secrets == [name]

"""Code a Python tool would lose is refused, naming its line, wherever a member saves the tool.

Only a tool's function is kept: each tool runs in the sandbox from its own `def` alone. The
tool form kept that and dropped the rest without a word: `import os` above `def do_u()` saved
("Created tool do_u.", every lint passed), vanished from the stored code, and the tool's
first run failed with NameError. An imported module lost the imports, constants and helpers
its tools read the same way. Both are refused now, saying what to do instead; what does not
change what runs (docstrings, comments, the decorator, imports inside the function) is kept.
"""

from __future__ import annotations

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tool_create

pytestmark = pytest.mark.django_db

DESCRIPTION = "Say which directory the tool runs in. Use when asked where files would go."
FUNCTION = (
    "def do_u() -> ToolResponse:\n"
    "    return ToolResponse(success=True, data={'cwd': os.getcwd()})\n"
)
NEWCOMER = "import os\n\n" + FUNCTION
MOVE_IMPORT = "move the import inside the function"


@pytest.fixture
def browser(member) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(member)
    return client


def page_text(response) -> str:
    return html.unescape(response.content.decode())


def create(browser: Client, sandbox, source: str):
    return browser.post(
        reverse("catalog:tool-create", args=[sandbox.pk]),
        {"name": "do_u", "description": DESCRIPTION, "source": source, "kind": "python"},
    )


def test_the_newcomers_import_above_the_function_is_refused_naming_its_line(
    browser, empty_sandbox
) -> None:
    response = create(browser, empty_sandbox, NEWCOMER)
    assert response.status_code == 422, response.status_code
    text = page_text(response)
    assert (
        "line 1: `import os` is outside the function do_u and would not be kept: only the "
        f"function's own code runs in the sandbox; {MOVE_IMPORT}"
    ) in text, text[-3000:]
    assert "Created tool" not in text
    assert not Tool.objects.exists()


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (
            "LIMIT = 3\n\n\ndef do_u() -> ToolResponse:\n"
            "    return ToolResponse(success=True, data=LIMIT)\n",
            "line 1: `LIMIT = 3` is outside the function do_u and would not be kept",
        ),
        (
            "def helper() -> int:\n    return 3\n\n\ndef do_u() -> ToolResponse:\n"
            "    return ToolResponse(success=True, data=helper())\n",
            "found 2 (helper at line 1, do_u at line 5): only the tool's own function runs in "
            "the sandbox; define helpers inside it",
        ),
        (
            "class Shelf:\n    size = 3\n\n\ndef do_u() -> ToolResponse:\n"
            "    return ToolResponse(success=True, data=Shelf.size)\n",
            "line 1: `class Shelf: ...` is outside the function do_u and would not be kept: only the "
            "function's own code runs in the sandbox; define Shelf inside the function",
        ),
        (
            FUNCTION + "\n\nprint(do_u())\n",
            "line 5: `print(do_u())` is outside the function do_u and would not be kept",
        ),
    ],
    ids=["constant", "helper function", "class", "code after the function"],
)
def test_other_code_beside_the_function_is_refused_naming_it(
    browser, empty_sandbox, source, said
) -> None:
    response = create(browser, empty_sandbox, source)
    assert response.status_code == 422, response.status_code
    assert said in page_text(response), page_text(response)[-3000:]
    assert not Tool.objects.exists()


def test_an_edit_that_adds_an_import_above_the_function_is_refused_and_keeps_the_code(
    browser, empty_sandbox, member
) -> None:
    inside = FUNCTION.replace("    return", "    import os\n\n    return")
    tool = tool_create(
        sandbox=empty_sandbox, name="do_u", description=DESCRIPTION, source=inside, author=member
    )
    response = browser.post(
        reverse("catalog:tool-edit", args=[tool.pk]),
        {"name": "do_u", "description": DESCRIPTION, "source": NEWCOMER, "kind": "python"},
    )
    assert response.status_code == 422, response.status_code
    assert "line 1: `import os` is outside the function do_u" in page_text(response)
    tool.refresh_from_db()
    assert tool.source == inside
    assert tool.versions.count() == 1


def test_what_does_not_change_what_runs_is_still_accepted(browser, empty_sandbox) -> None:
    # Passes before the change too: kept here so that the rule never refuses these.
    source = (
        '"""Where the tool runs."""\n'
        "# A comment above the decorator.\n"
        "\n"
        "@tool(description='ignored: the form has its own')\n"
        "def do_u() -> ToolResponse:\n"
        '    """Return the working directory."""\n'
        "    import os  # inside, where it is kept\n"
        "\n"
        "    return ToolResponse(success=True, data={'cwd': os.getcwd()})\n"
        "# A comment after it.\n"
    )
    response = create(browser, empty_sandbox, source)
    assert response.status_code == 302, page_text(response)[-3000:]
    stored = Tool.objects.get(name="do_u").source
    assert stored.startswith("def do_u() -> ToolResponse:\n")
    assert "    import os  # inside, where it is kept\n" in stored


def test_the_form_says_where_imports_belong(browser, empty_sandbox) -> None:
    text = page_text(browser.get(reverse("catalog:tool-create", args=[empty_sandbox.pk])))
    assert "its imports, constants and helpers go inside it" in text


MODULE = '''"""Shop tools."""

from __future__ import annotations

import os

from jazzmine.core.tools import ToolResponse, tool

LIMIT = 3


def shelf(n: int) -> list[int]:
    return list(range(n))


@tool(description="Say which directory the tool runs in.")
def do_u() -> ToolResponse:
    return ToolResponse(success=True, data={"cwd": os.getcwd()})


@tool(description="List the shelf.")
def stock() -> ToolResponse:
    return ToolResponse(success=True, data=shelf(LIMIT))


@tool(description="Say the time.")
def now() -> ToolResponse:
    import time

    return ToolResponse(success=True, data=time.time())
'''


def import_post(browser: Client, team, text: str):
    upload = SimpleUploadedFile("shop.py", text.encode())
    return browser.post(reverse("catalog:import"), {"team": team.pk, "files": upload})


def test_an_import_whose_tools_read_the_modules_code_is_refused_naming_each_line(
    browser, team
) -> None:
    response = import_post(browser, team, MODULE)
    assert response.status_code == 422, response.status_code
    text = page_text(response)
    for line, said in [
        (
            5,
            f"`import os` is outside the function do_u, which uses os, and would not be "
            f"kept: only the function's own code runs in the sandbox; {MOVE_IMPORT}",
        ),
        (9, "`LIMIT = 3` is outside the function stock, which uses LIMIT, and would not be kept"),
        (
            12,
            "`def shelf(n: int) -> list[int]: ...` is outside the function stock, which uses "
            "shelf, and would not be kept: only the function's own code runs in the sandbox; "
            "define shelf inside the function",
        ),
    ]:
        assert f"shop.py:{line}</code> {said}" in text, text[-3000:]
    assert "function now" not in text  # its import is its own: nothing of it is lost
    assert not Tool.objects.exists()


def test_an_import_whose_module_code_serves_only_its_decorators_is_accepted(browser, team) -> None:
    # Passes before the change too: the module's imports for `@tool` are its own.
    kept = MODULE.split("@tool", 1)[0] + "@tool" + MODULE.split("@tool")[-1]
    response = import_post(browser, team, kept)
    assert response.status_code == 200, page_text(response)[-3000:]
    assert list(Tool.objects.values_list("name", flat=True)) == ["now"]

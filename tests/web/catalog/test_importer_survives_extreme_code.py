"""A `.py` upload that CPython's parser or the literal reader cannot handle is an import problem
naming the file, never a 500; nothing of the upload is stored."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import tools_import
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

GOOD = '@tool(description="Fine.", sandbox="s")\ndef fine():\n    return 1\n'


def _tool(parameters: str) -> str:
    return f'@tool(description="d", parameters={parameters})\ndef f():\n    pass\n'


# name -> (module text, words of the problem)
TOO_DEEP = {
    "long sum": ("x = " + "+".join(["1"] * 200_000) + "\n", "too deeply nested"),
    "long attribute chain": ("x = a" + ".b" * 200_000 + "\n", "too deeply nested"),
    "deep not": ("x = " + "not " * 100_000 + "1\n", "too deeply nested"),
    "long sum in a tool": (
        GOOD.replace("return 1", "return " + "+".join(["1"] * 200_000)),
        "too deeply nested",
    ),
    # Parses, but ast.unparse (used to quote the argument) recurses deeper than the parser.
    "deep unary minus as a default": (
        _tool('[{"name": "a", "default": ' + "-" * 600 + "1}]"),
        "too deeply nested to show",
    ),
}
# Dict keys that are not strings: unhashable ones used to raise TypeError.
NON_STRING_KEYS = {
    "list key": _tool("[{[1]: 2}]"),
    "tuple key": _tool("[{(1, 2): 2}]"),
    "dict key": _tool("[{{}: 2}]"),
    "ToolParameter key": _tool('[{ToolParameter(name="a"): 2}]'),
    "number key": _tool("[{1: 2}]"),
    "None key": _tool("[{None: 2}]"),
    "list key in a SandboxConfig": 'register_sandbox(SandboxConfig(name="t", secrets=[{[1]: 2}]))\n',
}
CASES = {
    **TOO_DEEP,
    **{name: (text, "dict keys must be strings") for name, text in NON_STRING_KEYS.items()},
}
# Hashable non-string keys were refused before too (less clearly), so the page never crashed.
CRASHED_THE_PAGE = [name for name in CASES if name not in ("number key", "None key")]


@pytest.mark.parametrize("case", CASES)
def test_tools_import_refuses_it_naming_the_file(team, user, case: str) -> None:
    text, words = CASES[case]
    with pytest.raises(ImportRefused) as caught:
        tools_import(
            team=team,
            files=[source_file("good.py", GOOD), source_file("bad.py", text)],
            author=user,
        )
    assert any(p.filename == "bad.py" and words in p.message for p in caught.value.problems), [
        str(p) for p in caught.value.problems
    ]
    assert not Tool.objects.exists() and not Sandbox.objects.exists()


@pytest.mark.parametrize("case", CRASHED_THE_PAGE)
def test_the_import_page_answers_422(team, member, case: str) -> None:
    text, _words = CASES[case]
    membership_set(team=team, user=member, role=Role.ADMIN)
    client = Client(raise_request_exception=False)
    client.force_login(member)
    upload = SimpleUploadedFile("bad.py", text.encode(), content_type="text/x-python")
    response = client.post("/catalog/import/", {"team": team.pk, "files": [upload]})
    assert response.status_code == 422
    assert "bad.py" in response.content.decode()
    assert not Tool.objects.exists()

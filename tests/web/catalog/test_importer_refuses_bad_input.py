from __future__ import annotations

import pytest
from django.test import override_settings

from jazzmine_web.catalog.importer import ImportRefused, SourceFile
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

GOOD = """
@tool(description="Fine.", sandbox="s")
def fine() -> ToolResponse:
    return ToolResponse(success=True)
"""


def refused(team, user, *files) -> list[str]:
    with pytest.raises(ImportRefused) as info:
        tools_import(team=team, files=list(files), author=user)
    assert not Tool.objects.exists() and not Sandbox.objects.exists()  # nothing half-imported
    return [str(p) for p in info.value.problems]


def test_it_refuses_a_syntax_error_naming_file_and_line(team, user) -> None:
    (problem,) = refused(
        team, user, source_file("good.py", GOOD), source_file("bad.py", "x = 1\ndef (:\n")
    )
    assert problem.startswith("bad.py, line 2: syntax error")


def test_it_refuses_a_tool_without_description(team, user) -> None:
    text = "\n\n@tool(sandbox='s')\ndef nodoc() -> ToolResponse:\n    return 1\n"
    (problem,) = refused(team, user, source_file("nodoc.py", text))
    assert problem.startswith("nodoc.py, line 4: tool nodoc(): has no description")


def test_it_refuses_a_non_literal_argument_naming_it(team, user) -> None:
    text = 'DESC = "x"\n\n@registry.tool(description=DESC)\ndef f() -> ToolResponse:\n    pass\n'
    (problem,) = refused(team, user, source_file("dyn.py", text))
    assert "dyn.py, line 3" in problem
    assert "argument 'description' is not a literal: `DESC`" in problem


def test_it_refuses_a_computed_parameter_inside_a_list(team, user) -> None:
    text = '@tool("d", parameters=[ToolParameter("a", "str", default=make())])\ndef f(a): pass\n'
    (problem,) = refused(team, user, source_file("p.py", text))
    assert "argument 'parameters' (item 1" in problem
    assert "`make()` is not a literal value" in problem


def test_it_refuses_a_duplicate_tool_name_across_files(team, user) -> None:
    problems = refused(team, user, source_file("a.py", GOOD), source_file("b.py", GOOD))
    assert problems == [
        "b.py, line 3: duplicate tool name 'fine' in sandbox 's' (first defined in a.py, line 3)"
    ]


@override_settings(JAZZMINE_IMPORT_MAX_FILE_BYTES=1000)
def test_it_refuses_a_file_over_the_size_limit_without_reading_it(team, user) -> None:
    (problem,) = refused(team, user, SourceFile(name="huge.py", size=50 * 1024 * 1024, data=None))
    assert problem == "huge.py: file is 52,428,800 bytes; the limit is 1,000 bytes"


def test_it_refuses_a_binary_file(team, user) -> None:
    (problem,) = refused(team, user, source_file("blob.py", b"\x7fELF\x00\x00\x01"))
    assert "binary file" in problem


def test_it_refuses_text_that_is_not_utf8_naming_the_line(team, user) -> None:
    (problem,) = refused(team, user, source_file("latin.py", "# ok\n# caf\xe9\n".encode("latin-1")))
    assert problem.startswith("latin.py, line 2: not UTF-8")


def test_it_refuses_a_file_with_no_tools(team, user) -> None:
    (problem,) = refused(team, user, source_file("empty.py", "x = 1\n"))
    assert "no @tool functions" in problem


def test_it_rolls_back_everything_when_the_core_refuses_one_tool(team, user) -> None:
    text = (
        GOOD
        + '\n@tool("Bad params.", [ToolParameter("zzz", "int")], sandbox="s")\ndef bad(a): pass\n'
    )
    (problem,) = refused(team, user, source_file("mixed.py", text))
    assert problem.startswith("mixed.py, line 7:") and "does not accept" in problem


def test_the_upload_page_refuses_a_file_over_the_per_file_limit(client, member, team) -> None:
    # Over the 1 MB file limit, under the 2 MB request limit (a 40 MB request: test_request_size_limit).
    client.force_login(member)
    from django.core.files.uploadedfile import SimpleUploadedFile

    big = SimpleUploadedFile("big.py", b"#" * (1536 * 1024), content_type="text/x-python")
    response = client.post("/catalog/import/", {"team": team.pk, "files": [big]})
    assert response.status_code == 422
    assert (
        "big.py" in response.content.decode()
        and "the limit is 1,048,576 bytes" in response.content.decode()
    )
    assert not Tool.objects.exists()

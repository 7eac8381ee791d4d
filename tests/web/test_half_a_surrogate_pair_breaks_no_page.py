"""Half of a UTF-16 surrogate pair, written as an escape, breaks no page and no import.

Python reads the escape `\\ud800` (in a JSON text, a Python literal) into a str that UTF-8
cannot encode. Stored as the ASCII it was sent as, it came back to life where a page parsed
it to pretty-print it: a bash run that printed `{"x": "\\ud800"}` made its run page, its
review page, its playground and its socket fail on every load, for good; a script tool's trial
did the same to the tool's page; a Python tool whose default is such a literal broke its page
through the lint's message. An import with one in a description was a 500.
"""

from __future__ import annotations

import json
import time

import pytest
from django.test import Client
from django.utils import timezone

from jazzmine.jsontext import json_shown
from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tool_create, tools_import
from jazzmine_web.runs.consumers import events_html_parts
from jazzmine_web.runs.models import Run, RunEvent
from jazzmine_web.runs.services import run_create, run_record_event
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import script_tools_import
from jazzmine_web.studio.storable import storable_json
from tests.web.helpers import run_printed, source_file

pytestmark = pytest.mark.django_db

PRINTED = '{"x": "\\ud800 half", "y": "\\udfff"}'  # as a script prints it: ASCII text
TOOL = """
@tool({args})
def look(x: str = "a") -> ToolResponse:
    return ToolResponse(success=True)
"""


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (r'description="Lo\ud800ok.", sandbox="s"', "description"),
        (r'description="Look.", sandbox="s\udfff"', "sandbox"),
        (r'"Look.", [ToolParameter("x", "str", description="\udc00")], sandbox="s"',
         "parameters[0].description"),
        (r'"Look.", [ToolParameter("x", "str", default="\ud83d")], sandbox="s"',
         "parameters[0].default"),
        (r'"Look.", [ToolParameter("x", "str", options=["a", "\udbff"])], sandbox="s"',
         "parameters[0].options[1]"),
    ],
    ids=["description", "sandbox", "parameter", "default", "option"],
)  # fmt: skip
def test_an_import_with_half_a_pair_is_refused_naming_the_field(team, user, args, field):
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("half.py", TOOL.format(args=args))], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert problem.startswith("half.py, line ")
    assert f"'{field}' contains half of a UTF-16 surrogate pair" in problem
    assert not Tool.objects.exists()


def test_an_update_with_half_a_pair_keeps_the_tool_as_it_was(team, user):
    fine = TOOL.format(args='description="Look.", sandbox="s"')
    tools_import(team=team, files=[source_file("look.py", fine)], author=user)
    half = TOOL.format(args=r'description="Lo\ud800ok.", sandbox="s"')
    with pytest.raises(ImportRefused):
        tools_import(team=team, files=[source_file("look.py", half)], author=user)
    assert Tool.objects.get(name="look").description == "Look."


def test_a_whole_character_imports_as_itself(team, user):
    # Python, unlike JSON, never pairs two escapes ("\\ud83d\\ude00" is two halves): a
    # character past U+FFFF is written whole, or as itself.
    for spelling in (r"\U0001f600", "\U0001f600"):
        whole = TOOL.format(args=f'description="Look {spelling}.", sandbox="s"')
        tools_import(team=team, files=[source_file("look.py", whole)], author=user)
        assert Tool.objects.get(name="look").description == "Look \U0001f600."


def test_the_import_page_answers_422(client, team, user):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from jazzmine_web.teams.models import Role
    from jazzmine_web.teams.services import membership_set

    membership_set(team=team, user=user, role=Role.ADMIN)
    client.force_login(user)
    text = TOOL.format(args=r'description="Lo\udcffok.", sandbox="s"').encode()
    response = client.post(
        "/catalog/import/", {"team": team.pk, "files": SimpleUploadedFile("half.py", text)}
    )
    assert response.status_code == 422
    assert "contains half of a UTF-16 surrogate pair" in response.content.decode()


@pytest.fixture
def bash_run(ecommerce, member) -> Run:
    """A finished bash run whose script printed JSON text holding half a pair."""
    result = {"stdout": PRINTED + "\n", "stderr": "", "exit_code": 0, "calls": 0}
    return run_printed(ecommerce, member, [
        ("log", {"message": PRINTED}),
        ("result", result),
        ("exit", {"outcome": "result", "message": ""}),
    ], language="bash", body=f"echo '{PRINTED}'\n")  # fmt: skip


def test_a_runs_page_shows_what_its_script_printed(client, member, bash_run):
    client.force_login(member)
    for _ in range(2):  # and again, as a reload does
        response = client.get(f"/runs/{bash_run.pk}/")
        assert response.status_code == 200
        html = response.content.decode()
        assert "&quot;x&quot;: &quot;\\ud800 half&quot;" in html  # shown as it was printed
        assert "stdout" in html


def test_a_runs_socket_renders_what_its_script_printed(bash_run):
    events = list(RunEvent.objects.filter(run=bash_run).order_by("seq").values(
        "seq", "type", "data", "ts"))  # fmt: skip
    (html,) = events_html_parts(bash_run, events, replace=True)
    html.encode()  # what a frame carries
    assert "\\ud800 half" in html


def test_a_trials_output_leaves_its_tools_page_working(client, member, ecommerce):
    script = ScriptTool(
        name="halves",
        description="Print halves of pairs for tests. Use when a test needs them.",
        parameters={"type": "object", "properties": {}},
        source=f"print({PRINTED!r})\n",
    )
    script_tools_import(sandbox=ecommerce, tools=[script], author=member)
    tool = ecommerce.tools.get(name="halves")
    TrialRun.objects.create(
        tool=tool, checksum=tool.checksum, code_digest=tool.code_digest, args={}, state="done",
        status="ok", passed=True, exit_code=0, stdout=PRINTED, finished_at=timezone.now(),
    )  # fmt: skip
    client.force_login(member)
    response = client.get(f"/catalog/tools/{tool.pk}/")
    assert response.status_code == 200
    assert "\\ud800 half" in response.content.decode()


def test_a_default_of_half_a_pair_leaves_its_tools_page_working(client, member, empty_sandbox):
    tool = tool_create(
        sandbox=empty_sandbox,
        name="halves",
        description="Half pairs.",
        source='def halves(a: str = "\\ud800") -> ToolResponse:\n    return ToolResponse()\n',
        parameters=[{"name": "a", "type": "str", "description": "A.", "default": "x"}],
    )
    client.force_login(member)
    response = client.get(f"/catalog/tools/{tool.pk}/")
    assert response.status_code == 200
    assert "the function&#x27;s default is &quot;\\ud800&quot;" in response.content.decode()


def test_json_shown_writes_halves_as_escapes_and_reads_back_the_same():
    value = {"x": "\ud800 half", "é": ["\udfff", "\U0001f600"]}
    text = json_shown(value, indent=2)
    text.encode()
    assert json.loads(text) == value
    assert "é" in text and "\U0001f600" in text  # every whole character as it is
    assert json_shown("plain") == '"plain"'


def test_stored_output_holds_no_half_pair(ecommerce, member):
    assert storable_json({"k\udc80": ["a\ud800b"]}) == {"k\ufffd": ["a\ufffdb"]}
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    event = {"seq": 1, "type": "log", "data": {"message": "a\ud800b"}, "ts": time.time()}
    run_record_event(run_id=run.pk, event=event)
    assert RunEvent.objects.get(run=run).data == {"message": "a\ufffdb"}
    client = Client()
    client.force_login(member)
    assert client.get(f"/runs/{run.pk}/").status_code == 200

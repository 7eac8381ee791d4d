"""A script tool with dependencies can get its secrets in a trial, and so pass and be published.

Its trial runs in an image built with its (unpublished) dependencies, and got its secrets only
when that image's wheel files were the ones an admin accepted for the sandbox. But the sandbox
page offers the files of the sandbox's own image, built from published tools only: a tool that
needs its secret to pass its trial could never pass, never be published, and the message sent
the admin to the sandbox page, where those files are not. Now each trial records the files of
its image, the tool page lists them, and a team admin accepts them there for trials of that
very code (by its whole digest). Runs keep to the sandbox's acceptance.
"""

from __future__ import annotations

import html

import pytest
from django.test import Client

from jazzmine.sandbox.wheels import wheels_digest
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import sandbox_create, script_tool_save, secret_value_set
from jazzmine_web.catalog.services.secrets import trial_wheels_problem
from jazzmine_web.reviews.models import AuditEntry
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import trial_execute
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import team_create
from tests.hostile_wheels import write_index
from tests.web.helpers import page_form, teammate, tool_accept_post, tool_form_post

from .conftest import make_tool

pytestmark = pytest.mark.django_db

TOKEN = "xoxb-slack-s3cret-5150"
# It says which build of its dependency it imported and whether it saw its token, and it
# fails without the token: only a trial that got it passes.
SCRIPT = (
    "import json, os, sys\n"
    "import jzslack\n"
    "seen = bool(os.environ.get('SLACK_TOKEN'))\n"
    "print(json.dumps({'build': jzslack.BUILD, 'token': seen}))\n"
    "sys.exit(0 if seen else 1)\n"
)
WHERE = "an admin can accept them on tool send_slack's page"


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def serve(root, build: str) -> str:
    """The operator's index: `jzslack` 1.0, one build of it (its files differ by `build`)."""
    return write_index(root, {"jzslack": {"1.0": {"jzslack/__init__.py": f"BUILD = {build!r}\n".encode()}}})  # fmt: skip


@pytest.fixture
def index(tmp_path, monkeypatch, settings):
    url = serve(tmp_path / "index", "first")
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache-1"))
    settings.JAZZMINE_PIP_INDEX_URL = url
    return url


@pytest.fixture
def slack(sandbox, member, admin, index, docker_client, base_image):
    """A member's script tool with a dependency; its admin gave it the secret it needs.

    Declaring a secret is an admin's (a member may not), and the admin's edit accepts the
    code it saves: what keeps the secret back is the wheel files alone.
    """
    tool = make_tool("send_slack", SCRIPT, dependencies=["jzslack==1.0"])
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=member, actor=member)
    tool_form_post(browser(admin), row, secrets=["SLACK_TOKEN"], note="give it the token")
    secret_value_set(sandbox=sandbox, name="SLACK_TOKEN", value=TOKEN, user=admin, actor=admin)
    row.refresh_from_db()
    assert row.code_accepted and not row.published
    images: list[str] = []
    yield row, images
    for tag in dict.fromkeys(t for t in images if t):
        docker_client.images.remove(tag, force=True)


def trial_through_the_page(client: Client, row: Tool, images: list[str]) -> TrialRun:
    """Press Run trial on the tool's page, and let the worker run it."""
    assert client.post(f"/catalog/tools/{row.pk}/trials/", {}).status_code in (200, 302)
    trial = trial_execute(trial_id=TrialRun.objects.filter(tool=row).latest("created_at").pk)
    images.append(trial.image)
    return trial


def page(client: Client, row: Tool) -> str:
    return html.unescape(client.get(f"/catalog/tools/{row.pk}/").content.decode())


def accept_form(client: Client, row: Tool) -> tuple[str, dict[str, list[str]]]:
    """Return the trial panel's Accept form: its action and the fields it posts."""
    page = f"/catalog/tools/{row.pk}/"
    return page_form(client, page, f"{page}trials/accept-wheels/")


def press(client: Client, action: str, fields: dict[str, list[str]]) -> str:
    """Post a form as the browser does, and return the page it lands on (its messages)."""
    response = client.post(action, fields, follow=True)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def accepted_row(row: Tool) -> tuple[object, str]:
    fresh = Tool.objects.get(pk=row.pk)
    return fresh.trial_accepted_wheels, fresh.trial_accepted_code_digest


def remade_from_another_build(row, images, tmp_path, monkeypatch, docker_client) -> None:
    """The index now serves another file for jzslack 1.0; the trial image goes (a prune)."""
    serve(tmp_path / "index", "second")
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache-2"))
    for tag in dict.fromkeys(t for t in images if t):
        docker_client.images.remove(tag, force=True)
    images.clear()  # gone: the fixture has none left to remove


@pytest.mark.docker
def test_an_admin_accepts_a_trials_wheel_files_on_the_tool_page_and_it_publishes(
    slack, member, admin
) -> None:
    row, images = slack
    members, admins = browser(member), browser(admin)

    trial = trial_through_the_page(members, row, images)
    assert not trial.passed and '"token": false' in trial.stdout and TOKEN not in trial.stdout
    [line] = trial.image_wheels
    assert line.startswith("jzslack-1.0-py3-none-any.whl ")
    assert "SLACK_TOKEN" in trial.message
    assert (
        f"no admin has accepted the wheels in this image yet (1 file(s)); {WHERE}" in trial.message
    )
    assert "sandbox page" not in trial.message

    # The member reads the files and who must accept them; no button.
    shown = page(members, row)
    assert line in shown and "secrets withheld until an admin accepts these wheel files" in shown
    assert "A team admin must accept these wheel files" in shown
    assert 'id="accept-trial-wheels"' not in shown and "accept-wheels/" not in shown
    assert members.post(f"/catalog/tools/{row.pk}/publish/", {"published": "1"}).status_code == 302
    assert not Tool.objects.get(pk=row.pk).published  # no trial passed yet

    # The admin reads the same files, and accepts them with the page's own form.
    assert line in page(admins, row)
    action, fields = accept_form(admins, row)
    assert fields["wheels"] == [wheels_digest([line])]
    assert fields["digest"] == [row.code_digest]
    landed = press(admins, action, fields)
    assert "Accepted 1 wheel file(s) for trials of send_slack's current code" in landed
    assert accepted_row(row) == ([line], row.code_digest)
    entry = AuditEntry.objects.filter(action="trial_wheels_accepted").latest("created_at")
    assert entry.code_sha256 == row.code_digest and entry.actor_user == admin
    assert entry.data["changes"]["trial_accepted_wheels"] == [None, [line]]

    # Twice in a row: the trial gets its token, and passes.
    for _ in range(2):
        trial = trial_through_the_page(members, row, images)
        assert trial.passed and trial.data == {"build": "first", "token": True}, trial.message
        assert "withheld" not in trial.message and TOKEN not in trial.stdout
    shown = page(members, row)
    assert "The wheel files of this trial's image are accepted for trials of this code" in shown
    assert 'id="trial-wheels-files"' not in shown

    assert members.post(f"/catalog/tools/{row.pk}/publish/", {"published": "1"}).status_code == 302
    assert Tool.objects.get(pk=row.pk).published


@pytest.mark.docker
def test_the_acceptance_counts_for_that_code_and_those_files_only(
    slack, member, admin, tmp_path, monkeypatch, docker_client
) -> None:
    row, images = slack
    members, admins = browser(member), browser(admin)
    trial_through_the_page(members, row, images)
    press(admins, *accept_form(admins, row))
    assert trial_through_the_page(members, row, images).passed

    # The member changes the code; the admin accepts the new code, not yet its trial's files.
    tool_form_post(members, row, source=SCRIPT.replace("seen = ", "seen  = "), note="tweak")
    row.refresh_from_db()
    trial = trial_through_the_page(members, row, images)
    assert not trial.passed and "tool send_slack's code changed since an admin" in trial.message
    tool_accept_post(admins, row)
    row.refresh_from_db()
    trial = trial_through_the_page(members, row, images)
    assert not trial.passed and '"token": false' in trial.stdout
    assert (
        "the wheel files accepted for tool send_slack's trials were accepted for other code of "
        f"it, not this code (1 file(s) in this image); {WHERE}"
    ) in trial.message
    action, fields = accept_form(admins, row)  # offered again, bound to the new code
    assert fields["digest"] == [row.code_digest]
    press(admins, action, fields)
    first = trial_through_the_page(members, row, images)
    assert first.passed and first.data == {"build": "first", "token": True}

    # The index serves another file for the same pinned version; the image is made again.
    remade_from_another_build(row, images, tmp_path, monkeypatch, docker_client)
    trial = trial_through_the_page(members, row, images)
    [second] = trial.image_wheels
    assert second != first.image_wheels[0] and second.split()[0] == first.image_wheels[0].split()[0]
    assert row.dependencies == ["jzslack==1.0"]
    assert not trial.passed and '"build": "second", "token": false' in trial.stdout
    assert f"the wheels in this image are not the ones an admin accepted: 1 differ; {WHERE}" in (
        trial.message
    )
    assert second in page(members, row)

    # The admin reads the new file and accepts it.
    press(admins, *accept_form(admins, row))
    trial = trial_through_the_page(members, row, images)
    assert trial.passed and trial.data == {"build": "second", "token": True}


# --- Refusals: the files are read from recorded trials here (the tests above run real ones) --

LINE = "jzslack-1.0-py3-none-any.whl " + "a" * 64
OTHER = "jzslack-1.0-py3-none-any.whl " + "b" * 64


def recorded(row: Tool, files: list[str] | None) -> TrialRun:
    """Record a finished trial of the row's current code that ran beside `files`."""
    return TrialRun.objects.create(
        tool=row, checksum=row.checksum, code_digest=row.code_digest, state="done",
        status="script_error", passed=False, image_wheels=files,
    )  # fmt: skip


@pytest.fixture
def quiet(sandbox, member, admin):
    """The same tool, its image not built: what the page offers is what a trial recorded."""
    tool = make_tool("send_slack", SCRIPT, dependencies=["jzslack==1.0"])
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=member, actor=member)
    tool_form_post(browser(admin), row, secrets=["SLACK_TOKEN"])
    row.refresh_from_db()
    recorded(row, [LINE])
    return row


def test_a_form_shown_before_the_files_changed_accepts_nothing(quiet, admin) -> None:
    admins = browser(admin)
    action, fields = accept_form(admins, quiet)
    recorded(quiet, [OTHER])  # a newer trial, whose image fetched another file
    landed = press(admins, action, fields)
    assert (
        "The wheel files of tool send_slack's latest trial changed since you looked "
        "(now 1 file(s)); nothing was accepted. Read them again before accepting."
    ) in landed
    assert accepted_row(quiet) == (None, "")
    assert OTHER in landed  # the page lists the new file, to read again
    press(admins, *accept_form(admins, quiet))
    assert accepted_row(quiet) == ([OTHER], quiet.code_digest)


def test_a_form_shown_before_the_code_changed_accepts_nothing(quiet, member, admin) -> None:
    admins = browser(admin)
    action, fields = accept_form(admins, quiet)
    tool_form_post(browser(member), quiet, source=SCRIPT + "# more\n")
    quiet.refresh_from_db()
    recorded(quiet, [LINE])  # the same file, beside other code
    landed = press(admins, action, fields)
    assert (
        f"Tool send_slack's code changed since you looked (now {quiet.checksum}); nothing was "
        "accepted. Read its trial's wheel files again before accepting."
    ) in landed
    assert accepted_row(quiet) == (None, "")
    assert not AuditEntry.objects.filter(action="trial_wheels_accepted").exists()


def test_a_form_without_the_fields_accepts_nothing(quiet, admin) -> None:
    action, _ = accept_form(browser(admin), quiet)
    press(browser(admin), action, {})
    assert accepted_row(quiet) == (None, "")


def test_a_member_may_not_accept(quiet, member, admin) -> None:
    action, fields = accept_form(browser(admin), quiet)
    assert browser(member).post(action, fields).status_code == 403
    assert accepted_row(quiet) == (None, "")
    assert not AuditEntry.objects.filter(action="trial_wheels_accepted").exists()


def test_another_teams_tool_or_no_tool_is_not_found(quiet, admin, outsider) -> None:
    rival = team_create(name="Rival", slug="rival")
    rex = teammate(rival, Role.ADMIN, username="rex")
    theirs = sandbox_create(team=rival, name="theirs")
    their_tool, _ = script_tool_save(sandbox=theirs, tool=make_tool("send_slack", SCRIPT,
                                     dependencies=["jzslack==1.0"]), author=rex, actor=rex)  # fmt: skip
    recorded(their_tool, [LINE])
    # What their page's form would carry: an attacker copies it.
    fields = {"wheels": wheels_digest([LINE]), "digest": their_tool.code_digest}
    for pk in (their_tool.pk, 999_999_999):
        assert (
            browser(admin).post(f"/catalog/tools/{pk}/trials/accept-wheels/", fields).status_code
            == 404
        )
    action, fields = accept_form(browser(admin), quiet)
    assert browser(outsider).post(action, fields).status_code == 404
    assert accepted_row(their_tool) == (None, "") and accepted_row(quiet) == (None, "")


def test_a_python_tools_id_is_not_found(ecommerce, admin) -> None:
    python_tool = ecommerce.tools.first()
    url = f"/catalog/tools/{python_tool.pk}/trials/accept-wheels/"
    assert browser(admin).post(url, {"wheels": "x", "digest": "y"}).status_code == 404


def test_the_check_fails_closed(quiet, admin) -> None:
    digest = quiet.code_digest
    # An image that does not say which wheels it holds gets nothing, whatever was accepted.
    Tool.objects.filter(pk=quiet.pk).update(trial_accepted_wheels=[LINE], trial_accepted_code_digest=digest)  # fmt: skip
    quiet.refresh_from_db()
    assert "does not say which wheels it holds" in trial_wheels_problem(tool=quiet, code_digest=digest, image=None)  # fmt: skip
    assert trial_wheels_problem(tool=quiet, code_digest=digest, image=[LINE]) == ""
    # Another file of the same version is a difference; other code's files do not count.
    assert "1 differ" in trial_wheels_problem(tool=quiet, code_digest=digest, image=[OTHER])
    assert "other code" in trial_wheels_problem(tool=quiet, code_digest="0" * 64, image=[LINE])
    assert trial_wheels_problem(tool=quiet, code_digest="", image=[LINE])
    # The sandbox's accepted files count too, as before; an image with no wheel needs none.
    type(quiet.sandbox).objects.filter(pk=quiet.sandbox.pk).update(accepted_wheels=[OTHER])
    quiet.refresh_from_db()
    quiet.sandbox.refresh_from_db()
    assert trial_wheels_problem(tool=quiet, code_digest="0" * 64, image=[OTHER]) == ""
    assert trial_wheels_problem(tool=quiet, code_digest="0" * 64, image=[]) == ""
    # A trial in the base image records no files: the page offers nothing to accept.
    recorded(quiet, None)
    assert 'id="trial-wheels' not in page(browser(admin), quiet)

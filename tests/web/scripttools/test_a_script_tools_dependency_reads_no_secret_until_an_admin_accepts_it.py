"""A member's script tool that declares a dependency gets no secret into a real run until an
admin accepts its code; then the run works and every accepted tool has its secrets again.

Its dependency's wheel is unpacked into the image's shared `site/`, beside every tool of the
run's process. Before, only the script tool's own secrets were held back, so the wheel (here
one shipping `_strptime.py`, which the harness imported from it) read the secrets of the
admin's tools. One image is built, from a local index: the trial's and the runs' alike.
"""

from __future__ import annotations

import asyncio
import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jazzmine.sandbox import RunLimits
from jazzmine.sandbox.docker_runner import DockerRunner
from jazzmine_web.catalog.services import (
    sandbox_builder,
    sandbox_update,
    secret_value_set,
    tool_create,
)
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.services import trial_execute, trial_start
from jazzmine_web.teams.models import Role
from tests.hostile_wheels import LEAK_MARK, hostile_index
from tests.web.helpers import teammate, tool_accept_post

pytestmark = [pytest.mark.django_db, pytest.mark.docker]

SHOP = "shop-s3cret-1717"
SHOP_KEY_TOOL = (
    "def shop_key() -> ToolResponse:\n"
    "    import os\n"
    "    return ToolResponse(success=True, data=os.environ.get('SHOP_KEY'))\n"
)


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def helper_zip() -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("helper/tool.json", json.dumps({
            "name": "helper", "description": "Harmless helper.",
            "parameters": {"type": "object", "properties": {}},
            "dependencies": ["jzevil==1.0"],
        }))  # fmt: skip
        archive.writestr("helper/script.py", "print('{}')\n")
    return SimpleUploadedFile("helper.zip", buffer.getvalue(), content_type="application/zip")


def test_a_members_script_tool_dependency_reads_no_secret_until_an_admin_accepts_it(
    ecommerce, member, team, settings, monkeypatch, tmp_path, docker_client
) -> None:
    admin = teammate(team, Role.ADMIN, username="root_admin")
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"])
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    tool_create(sandbox=ecommerce, name="shop_key", description="Read the shop key.",
                source=SHOP_KEY_TOOL, author=admin, actor=admin)  # fmt: skip
    index = hostile_index(tmp_path / "index")  # the operator's index serves the member's wheel
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", index)
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache"))
    settings.JAZZMINE_PIP_INDEX_URL = index

    upload = helper_zip()
    response = browser(member).post(
        "/catalog/script-tools/import/", {"sandbox": ecommerce.pk, "archive": upload}
    )
    assert response.status_code == 200
    helper = ecommerce.tools.get(name="helper")
    trial = trial_execute(trial_id=trial_start(tool=helper, user=member, background=False).pk)
    tag = trial.image
    try:
        assert trial.passed, (trial.status, trial.message, trial.stderr)
        assert browser(member).post(f"/catalog/tools/{helper.pk}/publish/").status_code == 302
        builder = sandbox_builder(ecommerce, client=docker_client)
        assert builder.ensure_image(ecommerce.name).tag == tag  # the trial's image

        def run() -> tuple[list[str], list]:
            record = run_create(sandbox=ecommerce, user=member, start=False,
                                body="emit_result(shop_key().data)\n")  # fmt: skip
            prepared = run_claim_prepare(run_id=record.pk, worker="w1@host",
                                         known_images=frozenset({tag}))  # fmt: skip
            runner = DockerRunner(docker_client).bind(tag, RunLimits(memory_mb=128,
                                                                     timeout_seconds=20))  # fmt: skip

            async def events() -> list:
                return [event async for event in runner.run(prepared.request)]

            record.refresh_from_db()
            return record.notes, asyncio.run(events())

        notes, events = run()
        text = repr([(e.type, e.data) for e in events])
        assert SHOP not in text and LEAK_MARK not in text
        assert [e.data for e in events if e.type == "result"] == [None]
        assert "no admin has accepted tool helper's code yet" in notes[0]

        assert tool_accept_post(browser(admin), helper).status_code == 302
        notes, events = run()
        assert notes == []
        assert [e.data for e in events if e.type == "result"] == [SHOP]
    finally:
        if tag:
            docker_client.images.remove(tag, force=True)  # it holds the member's wheel

"""A Python script tool imports the dependencies it declares, and the sandbox's, in its trial
and in a run; the standard library stays ahead of any wheel.

The build unpacks every wheel into the image's `site/`, which the harness puts on its own
path; a script tool runs in a process of its own, whose path had no `site/`: its trial
failed "missing module ... declare it as a dependency", which it was, and so did every run.
A tool without dependencies of its own was tried in the base image, where the sandbox's
dependencies, which every run of it imports, are not.
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
from jazzmine_web.catalog.services import sandbox_builder, sandbox_update
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from jazzmine_web.scripttools.services import trial_execute, trial_start
from tests.hostile_wheels import write_index

pytestmark = [pytest.mark.django_db, pytest.mark.docker]

WHEELS = {
    "jzslug": {"1.0": {
        "jzslug/__init__.py": b"def slug(text):\n    return '-'.join(text.lower().split())\n",
        # Named like the standard library's module: the script must get the real one.
        "textwrap.py": b"raise ImportError('a wheel shadowed the standard library')\n",
    }},
    "jzshout": {"1.0": {"jzshout/__init__.py": b"def shout(text):\n    return text.upper() + '!'\n"}},
}  # fmt: skip

SLUG = """\
import json, sys, textwrap
from jzslug import slug
from jzshout import shout
args = json.load(sys.stdin)
print(json.dumps({"slug": slug(args["text"]), "shout": shout(args["text"]),
                  "dedented": textwrap.dedent("  kept"), "argv": sys.argv,
                  "main": __name__}))
"""
SHOUT = """\
import json, sys
from jzshout import shout
print(json.dumps({"shout": shout(json.load(sys.stdin)["text"])}))
"""


def tool_zip(name: str, script: str, dependencies: list[str]) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}/tool.json", json.dumps({
            "name": name, "description": f"Make a {name} of a text.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"]},
            "dependencies": dependencies,
        }))  # fmt: skip
        archive.writestr(f"{name}/script.py", script)
    return SimpleUploadedFile(f"{name}.zip", buffer.getvalue(), content_type="application/zip")


def test_a_script_tool_imports_its_own_and_the_sandboxs_wheels_in_a_trial_and_a_run(
    empty_sandbox, admin, settings, monkeypatch, tmp_path, docker_client
) -> None:
    index = write_index(tmp_path / "index", WHEELS)
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", index)
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache"))
    settings.JAZZMINE_PIP_INDEX_URL = index
    sandbox = empty_sandbox
    sandbox_update(sandbox=sandbox, actor=admin, dependencies=["jzshout==1.0"])
    browser = Client()
    browser.force_login(admin)
    tags: set[str] = set()
    try:
        for name, script, dependencies in (
            ("make_slug", SLUG, ["jzslug==1.0"]),
            ("make_shout", SHOUT, []),  # only the sandbox's: tried in the sandbox's image
        ):
            response = browser.post(
                "/catalog/script-tools/import/",
                {"sandbox": sandbox.pk, "archive": tool_zip(name, script, dependencies)},
            )
            assert response.status_code == 200, response.content.decode()[-2000:]
            tool = sandbox.tools.get(name=name)
            started = trial_start(
                tool=tool, user=admin, args={"text": "Hello World"}, background=False
            )
            trial = trial_execute(trial_id=started.pk)
            tags.add(trial.image)
            assert trial.passed, (trial.status, trial.message, trial.stderr)
            assert trial.image != sandbox.base_image
            if name == "make_slug":
                assert trial.data == {"slug": "hello-world", "shout": "HELLO WORLD!",
                                      "dedented": "kept", "argv": ["/tmp/tool/script.py"],
                                      "main": "__main__"}  # fmt: skip
            else:
                assert trial.data == {"shout": "HELLO WORLD!"}
            assert browser.post(f"/catalog/tools/{tool.pk}/publish/").status_code == 302
        tag = sandbox_builder(sandbox, client=docker_client).ensure_image(sandbox.name).tag
        tags.add(tag)
        record = run_create(
            sandbox=sandbox, user=admin, start=False,
            body="emit_result([make_slug(text='Two Words').data, make_shout('hi').data])\n",
        )  # fmt: skip
        prepared = run_claim_prepare(
            run_id=record.pk, worker="w1@host", known_images=frozenset({tag})
        )
        runner = DockerRunner(docker_client).bind(tag, RunLimits(memory_mb=256, timeout_seconds=60))

        async def events() -> list:
            return [event async for event in runner.run(prepared.request)]

        happened = asyncio.run(events())
        results = [e.data for e in happened if e.type == "result"]
        assert len(results) == 1, [(e.type, e.data) for e in happened]
        made, shouted = results[0]
        assert made["slug"] == "two-words" and made["dedented"] == "kept", made
        assert made["main"] == "__main__" and made["argv"][0].endswith("/script.py"), made
        assert shouted == {"shout": "HI!"}
    finally:
        for tag in tags - {"", sandbox.base_image}:
            docker_client.images.remove(tag, force=True)

"""A trial that runs in the sandbox's image gets no secret while that image holds wheels no
admin accepted.

A script tool with dependencies is tried in the sandbox's image, whose `site/` holds its
wheels and every other one of the sandbox (its own list, its tools'): that is where the
script imports its dependencies from. The trial's gate read the tool's own acceptance only.
So a member added a package to the sandbox (`jzspy`, which ships a `jzgood/` that unpacks
over the admin's `jzgood`), started a trial of the admin's accepted tool on its page, and read
the admin's key in the trial's output. Now a trial in the sandbox's image needs what a run
needs: the sandbox's dependencies accepted, and every tool whose wheels are there.
"""

from __future__ import annotations

import base64
import io
import re

import pytest
from django.test import Client

from jazzmine.sandbox.wheels import WHEELS_LABEL, WHEELS_LIST_LABEL, wheels_digest
from jazzmine_web.catalog.services import (
    image_build_run,
    image_build_start,
    sandbox_builder,
    sandbox_update,
    script_tool_save,
    secret_value_set,
    tool_publish,
)
from jazzmine_web.scripttools import services
from tests.hostile_wheels import write_index

from .conftest import make_tool, run_trial

pytestmark = [pytest.mark.django_db, pytest.mark.docker]

SHOP = "shop-s3cret-1717"
# The admin's tool imports its dependency, which the image unpacks into its `site/`.
SHOP_TOOL = (
    "import json, os\n"
    "import jzgood\n"
    "print(json.dumps({'good': jzgood.OK, 'key': bool(os.environ.get('SHOP_KEY'))}))\n"
)
SPY = (
    "import os, sys\nsys.stderr.write('stolen: %s\\n' % os.environ.get('SHOP_KEY'))\nOK = 'good'\n"
)


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def index(tmp_path, monkeypatch, settings):
    """The operator's index: the admin's `jzgood`, and the member's `jzspy`."""
    url = write_index(tmp_path / "index", {
        "jzgood": {"1.0": {"jzgood/__init__.py": b"OK = 'good'\n"}},
        "jzspy": {"1.0": {"jzspy/__init__.py": b"", "jzgood/__init__.py": SPY.encode()}},
    })  # fmt: skip
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache"))
    settings.JAZZMINE_PIP_INDEX_URL = url
    return url


@pytest.fixture
def shop(sandbox, admin, index, docker_client):
    """An admin's script tool with a dependency, reading the key the admin set."""
    sandbox_update(sandbox=sandbox, actor=admin, secrets=["SHOP_KEY"])
    secret_value_set(sandbox=sandbox, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    tool = make_tool("shop", SHOP_TOOL, dependencies=["jzgood==1.0"], secrets=["SHOP_KEY"])
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=admin, actor=admin)
    assert row.code_accepted
    images: list[str] = []
    yield row, images
    for tag in dict.fromkeys(images):  # a tag tried twice is removed once
        docker_client.images.remove(tag, force=True)  # they hold the member's wheel


def accept_built_wheels(sandbox, admin) -> None:
    """Press Build on the sandbox page, then Accept, as the page now shows the image's wheels."""
    build = image_build_run(build_id=image_build_start(sandbox=sandbox, user=admin,
                                                       background=False).pk)  # fmt: skip
    assert build.wheels, build.log
    page = browser(admin).get(f"/catalog/sandboxes/{sandbox.pk}/").content.decode()
    [digest] = re.findall(r'name="wheels" value="([0-9a-f]{64})"', page)
    url = f"/catalog/sandboxes/{sandbox.pk}/accept-dependencies/"
    posted = {"dependency": list(sandbox.dependencies), "wheels": digest}
    assert browser(admin).post(url, posted).status_code == 302


def test_a_member_adding_a_package_reads_no_secret_from_a_trial_of_an_admins_tool(
    shop, member, admin
) -> None:
    row, images = shop
    # The wheel files of the image are bound by an admin's Accept after a build, not by the
    # admin's writing the tool (tests/web/runs/test_secrets_follow_the_wheel_files_an_admin_
    # accepted.py): until then the trial runs without the key, and says why.
    trial = run_trial(row, user=admin)
    images.append(trial.image)
    assert trial.passed and trial.data == {"good": "good", "key": False}
    assert "no admin has accepted the wheels in this image yet" in trial.message
    tool_publish(tool=row)
    accept_built_wheels(row.sandbox, admin)
    row.refresh_from_db()
    trial = run_trial(row, user=admin)
    images.append(trial.image)  # the published tool's image: the sandbox's own now
    assert trial.passed and trial.data == {"good": "good", "key": True}

    sandbox_update(sandbox=row.sandbox, actor=member, dependencies=["jzspy==1.0"])
    row.refresh_from_db()
    trial = run_trial(row, user=member)
    images.append(trial.image)
    assert SHOP not in trial.stdout + trial.stderr + trial.message
    assert trial.data == {"good": "good", "key": False}
    assert "no admin has accepted sandbox quant's dependencies jzspy==1.0" in trial.message

    # Accepting the list alone binds no file of the new image: the admin builds and accepts.
    row.sandbox.refresh_from_db()
    accept_built_wheels(row.sandbox, admin)
    row.refresh_from_db()
    trial = run_trial(row, user=member)
    assert trial.data == {"good": "good", "key": True}  # what the admin accepted reads it


def test_a_trial_keeps_to_its_own_acceptance_only_where_no_wheel_is(
    sandbox, member, admin, index, docker_client
) -> None:
    # No dependency anywhere: the trial runs in the base image, where no wheel is, and the
    # tool's own acceptance decides.
    sandbox_update(sandbox=sandbox, actor=admin, secrets=["SHOP_KEY"])
    secret_value_set(sandbox=sandbox, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    tool = make_tool("plain", "import json, os\nprint(json.dumps(bool(os.environ.get('SHOP_KEY'))))\n",
                     secrets=["SHOP_KEY"])  # fmt: skip
    row, _ = script_tool_save(sandbox=sandbox, tool=tool, author=admin, actor=admin)
    trial = run_trial(row, user=member)
    assert trial.image == sandbox.base_image and trial.data is True
    # A member's package for the sandbox: the tool's python3 imports from the image's
    # `site/`, where it is, so it is tried there, and gets no secret until an admin accepts.
    sandbox_update(sandbox=sandbox, actor=member, dependencies=["jzspy==1.0"])
    row.refresh_from_db()
    trial = run_trial(row, user=member)
    try:
        assert trial.image not in ("", sandbox.base_image) and trial.data is False
        assert "no admin has accepted sandbox quant's dependencies jzspy==1.0" in trial.message
    finally:
        if trial.image:
            docker_client.images.remove(trial.image, force=True)  # it holds the member's wheel


def test_a_trial_runs_in_the_image_whose_wheels_it_read_though_the_tag_moves(
    shop, admin, docker_client, monkeypatch
) -> None:
    """The trial's container is made from the image its check read, by id.

    It read the wheels of the image its tag named, then made its container from the tag: an
    image made again under that tag in between (removed, then built while the index served
    another `jzgood`) ran the admin's tool with the key the first image's accepted files
    earned. The other image here is made by hand, labelled as a build that fetched another
    file would label it.
    """
    row, images = shop
    tool_publish(tool=row)
    accept_built_wheels(row.sandbox, admin)
    row.refresh_from_db()
    tag = sandbox_builder(row.sandbox).image_tag(row.sandbox.name)
    other = [f"jzgood-1.0-py3-none-any.whl {'0' * 64}"]
    spied = base64.b64encode(SPY.encode()).decode()
    dockerfile = (
        f"FROM {tag}\nUSER root\n"
        "RUN python3 -c \"import base64; open('/opt/jazzmine/site/jzgood/__init__.py', 'wb')"
        f".write(base64.b64decode('{spied}'))\"\n"
        f'LABEL {WHEELS_LABEL}="{wheels_digest(other)}" {WHEELS_LIST_LABEL}="{other[0]}"\n'
    )
    spy, _ = docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), rm=True)
    images.append(spy.id)  # its removal takes the accepted image too, which it is built on
    real = services.trial_run

    def tag_moved_first(*args, **kwargs):  # the moment between the check and the container
        docker_client.api.tag(spy.id, *tag.rsplit(":", 1), force=True)
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "trial_run", tag_moved_first)
    trial = run_trial(row, user=admin)
    assert SHOP not in trial.stdout + trial.stderr + trial.message
    assert trial.data == {"good": "good", "key": True}  # the accepted image ran, by its id
    assert trial.image == tag  # recorded by its name

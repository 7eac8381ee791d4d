"""The sandbox page tells of the wheel files the worker reads: those of the current image,
whoever made it.

A run or a trial makes a missing image itself (`ensure_image`) and records no build row, and any
tool edit changes the content an image is of. The page read wheel files from build rows only: after
an admin edited a Python tool and a run made the image, it said "secrets withheld ... no build of
these dependencies is known yet" while the worker read the image's label, found the files an admin
had accepted and let every secret in. Accept bound no file (none listed) and the warning stayed;
the badge's tooltip began with ": a dependency's code loads..." (no reason of the sandbox's list to
tell). Now the page and Accept read the label of the image the current tag names, as the worker
does, and the build rows only when the engine holds no such image; the tooltip says the wheels'
reason; a build that ends has the page ask for the panel again, over the build's socket.
"""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from jazzmine.sandbox.wheels import wheels_digest
from jazzmine_web.asgi import application
from jazzmine_web.catalog.models import BuildStatus, ImageBuild, Sandbox
from jazzmine_web.catalog.services import (
    image_build_run,
    image_build_set_status,
    image_build_start,
    registry_for_sandbox,
    sandbox_builder,
    sandbox_update,
    secret_value_set,
    tool_update,
)
from tests.hostile_wheels import write_index
from tests.web.helpers import page_form, run_in_worker

SHOP = "shop-s3cret-1717"
BODY = "emit_result(1)\n"
WITHHELD = 'id="dependencies-withheld"'
UNBUILT = 'id="wheels-unbuilt"'


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def sandbox_page(client: Client, sandbox: Sandbox) -> str:
    return client.get(f"/catalog/sandboxes/{sandbox.pk}/").content.decode()


def tooltip(page: str) -> str:
    match = re.search(r'id="dependencies-withheld" title="([^"]*)"', page)
    assert match, page
    return match.group(1)


def accept(client: Client, sandbox: Sandbox) -> None:
    """Press the page's Accept button, posting what the page showed."""
    page = f"/catalog/sandboxes/{sandbox.pk}/"
    action, shown = page_form(client, page, f"{page}accept-dependencies/")
    assert client.post(action, shown).status_code == 302


def current_tag(sandbox: Sandbox) -> str:
    return sandbox_builder(sandbox).image_tag(sandbox.name)


@pytest.fixture
def shop(ecommerce, admin, tmp_path, monkeypatch, settings, docker_client, base_image):
    """The demo sandbox with a dependency its admin wrote (`jzlock`, from the operator's index),
    and a secret of its own; the images it makes are removed after."""
    url = write_index(tmp_path / "index", {"jzlock": {"1.0": {"jzlock/__init__.py": b"OK = 1\n"}}})
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache"))
    settings.JAZZMINE_PIP_INDEX_URL = url
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"],
                   dependencies=["jzlock==1.0"])  # fmt: skip
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    made: set[str] = set()
    yield ecommerce, made
    for tag in made | {current_tag(ecommerce)}:
        if sandbox_builder(ecommerce).image_exists(tag):
            docker_client.images.remove(tag, force=True)


def no_build_of_the_current_content(sandbox: Sandbox) -> bool:
    digest = registry_for_sandbox(sandbox).sandbox_digest(sandbox.name)
    return not sandbox.builds.filter(digest=digest).exists()


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_after_a_tool_edit_the_page_says_what_the_worker_does(
    shop, admin, member, monkeypatch, docker_client
) -> None:
    """The newcomer's steps: build, accept, edit only a tool's code, run from the playground."""
    sandbox, made = shop
    client = browser(admin)
    started = image_build_start(sandbox=sandbox, user=admin, background=False)
    first = image_build_run(build_id=started.pk)
    assert first.status == BuildStatus.SUCCEEDED, first.log
    made.add(first.tag)
    accept(client, sandbox)
    sandbox.refresh_from_db()
    assert sandbox.accepted_wheels == first.wheels
    assert WITHHELD not in sandbox_page(client, sandbox)

    tool = sandbox.tools.get(name="get_user")
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", "Ada King"), actor=admin)
    run, secrets = run_in_worker(sandbox, member, monkeypatch)
    assert secrets.get("SHOP_KEY") == SHOP and run.notes == []  # the worker let it in
    assert no_build_of_the_current_content(sandbox)  # the run made the image, with no row

    page = sandbox_page(client, sandbox)
    assert "Image" in page and 'data-image-state="up_to_date"' in page
    assert WITHHELD not in page and UNBUILT not in page  # so the page says no secret waits

    # The image truly gone (and no build of this content): the page says to build, as before.
    docker_client.images.remove(current_tag(sandbox), force=True)
    page = sandbox_page(client, sandbox)
    assert WITHHELD in page and UNBUILT in page


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_accept_binds_the_wheels_of_the_image_a_run_made(shop, admin, member,
                                                         monkeypatch) -> None:  # fmt: skip
    """No build was ever pressed: the admin's edit accepted the list, no file of it."""
    sandbox, _made = shop
    client = browser(admin)
    run, secrets = run_in_worker(sandbox, member, monkeypatch)
    assert secrets == {} and "no admin has accepted the wheels in this image yet" in run.notes[-1]
    [line] = sandbox_builder(sandbox).image_identity(current_tag(sandbox))[1]
    assert no_build_of_the_current_content(sandbox)

    page = sandbox_page(client, sandbox)
    assert WITHHELD in page and UNBUILT not in page
    assert f"<code>{line}</code>" in page and wheels_digest([line]) in page
    assert tooltip(page).startswith("No admin has accepted the wheels in this image yet")

    accept(client, sandbox)
    sandbox.refresh_from_db()
    assert sandbox.accepted_wheels == [line]
    assert WITHHELD not in sandbox_page(client, sandbox)  # the warning goes
    run, secrets = run_in_worker(sandbox, member, monkeypatch)
    assert secrets.get("SHOP_KEY") == SHOP and run.notes == []  # as the page says


@pytest.mark.docker
@pytest.mark.django_db
def test_an_image_that_does_not_say_its_wheels_is_not_called_unbuilt(
    ecommerce, admin, docker_client, base_image
) -> None:
    """An image made before images recorded their wheels: the worker withholds every secret
    ("rebuild it"), and the page says that image exists and does not say, not "no build"."""
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0"])
    repository, _, tag = current_tag(ecommerce).rpartition(":")
    docker_client.images.get(base_image).tag(repository, tag)  # no wheel label on it
    try:
        page = sandbox_page(browser(admin), ecommerce)
    finally:
        docker_client.images.remove(f"{repository}:{tag}")  # the tag only: the base stays
    assert WITHHELD in page and UNBUILT not in page and 'id="wheels-unlabelled"' in page
    assert tooltip(page).startswith("This image does not say which wheels it holds")
    assert 'name="wheels" value=""' in page  # Accept binds no file of it


@pytest.mark.django_db
def test_the_tooltip_says_why_when_the_list_is_accepted_but_no_wheel_is(ecommerce, admin) -> None:
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0"])
    ecommerce.refresh_from_db()
    assert ecommerce.dependencies_accepted and ecommerce.accepted_wheels is None
    page = sandbox_page(browser(admin), ecommerce)
    assert UNBUILT in page
    assert tooltip(page).startswith(
        "No image of sandbox ecommerce&#x27;s dependencies is known yet to read their wheel "
        "files from: build it"
    )


@pytest.mark.django_db
def test_an_engine_that_does_not_answer_is_not_called_no_build(
    ecommerce, admin, tmp_path, monkeypatch
) -> None:
    """The page read the build rows when the engine did not answer, and said "no build of
    these dependencies is known yet" of a sandbox whose runs made its image an hour ago."""
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0"])
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    client = browser(admin)
    for _ in range(2):  # and reloaded
        page = sandbox_page(client, ecommerce)
        assert WITHHELD in page and UNBUILT not in page
        assert 'id="wheels-engine-silent"' in page
        assert "the Docker engine did not answer this page" in page
        assert tooltip(page).startswith(
            "The Docker engine did not answer, so the wheel files of sandbox ecommerce&#x27;s "
            "image cannot be read"
        )
        assert 'name="wheels" value=""' in page  # Accept binds no file
    # A build recorded its files: those are offered, said to be the last build's.
    from .test_an_admin_accepts_only_the_wheel_files_the_page_showed import SEEN, built

    built(ecommerce, SEEN)
    page = sandbox_page(client, ecommerce)
    assert "the wheel files of the last build (the Docker engine did not answer" in page
    assert f"<code>{SEEN[0]}</code>" in page and wheels_digest(SEEN) in page


async def follow(client: Client, user, build_id: int) -> WebsocketCommunicator:
    await database_sync_to_async(client.force_login)(user)
    headers = [
        (b"origin", b"http://localhost"),
        (b"host", b"localhost"),
        (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()),
    ]
    ws = WebsocketCommunicator(application, f"/ws/builds/{build_id}/", headers=headers)
    connected, _ = await ws.connect()
    assert connected
    return ws


@pytest.mark.django_db(transaction=True)
async def test_a_build_that_ends_has_the_page_read_the_dependencies_again(
    client, admin, ecommerce
) -> None:
    """The panel said "no build ... known yet" after "Built by build #2" until a reload."""
    wheels = ["jzlock-1.0-py3-none-any.whl " + "a" * 64]
    await database_sync_to_async(sandbox_update)(
        sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0"]
    )
    build = await database_sync_to_async(image_build_start)(
        sandbox=ecommerce, user=admin, background=False
    )
    ws = await follow(client, admin, build.pk)
    try:
        snapshot = await ws.receive_from()
        assert "dependencies-refresh" not in snapshot  # nothing to read again mid-build
        await database_sync_to_async(ImageBuild.objects.filter(pk=build.pk).update)(wheels=wheels)
        await database_sync_to_async(image_build_set_status)(
            build_id=build.pk, status=BuildStatus.SUCCEEDED
        )
        final = await ws.receive_from()
    finally:
        await ws.disconnect()
    url = f"/catalog/sandboxes/{ecommerce.pk}/dependencies/"
    assert (
        f'<div id="dependencies-refresh" hx-swap-oob="true" hx-get="{url}" hx-trigger="load" '
        'hx-target="#dependencies-panel" hx-swap="outerHTML"></div>'
    ) in final
    # What that request gets: the panel, as a reload would draw it, the build's files listed.
    panel = (await database_sync_to_async(client.get)(url)).content.decode()
    assert panel.lstrip().startswith('<div id="dependencies-panel">')
    assert UNBUILT not in panel and f"<code>{wheels[0]}</code>" in panel
    assert 'name="csrfmiddlewaretoken"' in panel and wheels_digest(wheels) in panel

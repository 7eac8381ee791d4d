"""A run gets secrets only from an image holding the very wheel files an admin accepted.

Acceptance named versions, not files: pip picks another file for the same pinned version when
the index serves another one (a newer build tag, a more specific platform wheel, an index that
changed), and dependencies of dependencies are not pinned at all. So a package no admin saw
could load into every run's process with every secret. Now the builder labels each image with
its wheel files (name and SHA-256), Accept binds the files of the built image the page listed,
and the worker reads the label of the image it runs before any secret goes in.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine.sandbox.wheels import wheels_digest
from jazzmine.sandbox.workdirs import workdir_remove
from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.services import (
    image_build_run,
    image_build_start,
    registry_for_sandbox,
    sandbox_builder,
    sandbox_update,
    secret_value_set,
    tool_create,
)
from jazzmine_web.runs.executor import RunExecutor
from jazzmine_web.runs.models import RunEvent, RunStatus
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from tests.hostile_wheels import write_index
from tests.waiting import wait_until
from tests.web.helpers import page_form, run_in_worker

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

SHOP = "shop-s3cret-1717"
BODY = "emit_result(1)\n"


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def accept_form(client: Client, sandbox) -> tuple[str, dict[str, list[str]]]:
    """Return the sandbox page's Accept form: its action and the fields it posts."""
    page = f"/catalog/sandboxes/{sandbox.pk}/"
    return page_form(client, page, f"{page}accept-dependencies/")


def index_serving(root, marker: bytes) -> str:
    """The operator's index: `jzlock` 1.0, one build of it (its files differ by `marker`)."""
    return write_index(root, {"jzlock": {"1.0": {"jzlock/__init__.py": marker}}})


@pytest.fixture
def shop(ecommerce, admin, tmp_path, monkeypatch, settings, docker_client, base_image):
    """The demo sandbox with a dependency its admin wrote, and a secret of its own."""
    url = index_serving(tmp_path / "index", b"OK = 'first build'\n")
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache-1"))
    settings.JAZZMINE_PIP_INDEX_URL = url
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"],
                   dependencies=["jzlock==1.0"])  # fmt: skip
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    yield ecommerce
    tag = sandbox_builder(ecommerce).image_tag(ecommerce.name)
    if sandbox_builder(ecommerce).image_exists(tag):
        docker_client.images.remove(tag, force=True)


def build(sandbox, user) -> ImageBuild:
    """Press Build on the sandbox page, and let a worker run it."""
    started = image_build_start(sandbox=sandbox, user=user, background=False)
    done = image_build_run(build_id=started.pk)
    assert done.status == BuildStatus.SUCCEEDED, done.log
    return done


def test_another_file_for_the_same_pinned_version_gets_no_secret_until_an_admin_accepts_it(
    shop, member, admin, tmp_path, monkeypatch, docker_client
) -> None:
    first = build(shop, admin)
    [line] = first.wheels
    assert line.startswith("jzlock-1.0-py3-none-any.whl ")
    assert f"wheel: {line}" in first.log  # one line a wheel, for a person to read
    builder = sandbox_builder(shop)
    assert builder.image_identity(first.tag)[1] == [line]  # the label says the same

    # The admin wrote the list, but has seen no file of it: not yet.
    run, secrets = run_in_worker(shop, member, monkeypatch)
    assert secrets == {}
    assert "no admin has accepted the wheels in this image yet" in run.notes[-1]

    client = browser(admin)
    action, shown = accept_form(client, shop)
    assert shown["wheels"] == [wheels_digest([line])]
    assert line in client.get(f"/catalog/sandboxes/{shop.pk}/").content.decode()
    assert client.post(action, shown).status_code == 302
    shop.refresh_from_db()
    assert shop.accepted_wheels == [line]

    # (b) The accepted image itself: secrets flow.
    run, secrets = run_in_worker(shop, member, monkeypatch)
    assert secrets.get("SHOP_KEY") == SHOP and run.notes == []

    # (a) The index now serves another file for the same pinned version; the image is made
    # again (it was pruned, say) by the run's own worker, and the pin still reads jzlock==1.0.
    index_serving(tmp_path / "index", b"OK = 'second build'\nimport os\n")
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache-2"))
    docker_client.images.remove(first.tag, force=True)
    run, secrets = run_in_worker(shop, member, monkeypatch)
    assert shop.dependencies == ["jzlock==1.0"] and shop.dependencies_accepted
    assert secrets == {}
    assert run.notes[-1] == (
        "secrets withheld (MAIL_API_TOKEN, SHOP_KEY): the wheels in this image are not the "
        "ones an admin accepted: 1 differ; an admin can accept them on the sandbox page"
    )
    [second] = builder.image_identity(first.tag)[1]
    assert second != line and second.split()[0] == line.split()[0]

    # The admin reads the new file on the page (after Build reports it) and accepts it.
    assert build(shop, admin).wheels == [second]
    action, shown = accept_form(client, shop)
    assert shown["wheels"] == [wheels_digest([second])]
    assert client.post(action, shown).status_code == 302
    run, secrets = run_in_worker(shop, member, monkeypatch)
    assert secrets.get("SHOP_KEY") == SHOP and run.notes == []


def test_a_sandbox_without_dependencies_is_unaffected(ecommerce, admin, member, base_image,
                                                      monkeypatch) -> None:  # fmt: skip
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value=SHOP, user=admin, actor=admin)
    sandbox_builder(ecommerce).ensure_image(ecommerce.name)
    assert registry_for_sandbox(ecommerce).aggregate_dependencies(ecommerce.name) == []
    run, secrets = run_in_worker(ecommerce, member, monkeypatch)
    assert secrets == {"MAIL_API_TOKEN": SHOP} and run.notes == []
    page = browser(admin).get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert 'id="accept-dependencies"' not in page  # nothing to accept


def test_a_bubblewrap_run_reads_the_wheels_staged_for_it(ecommerce, admin, member, tmp_path,
                                                         monkeypatch, settings) -> None:  # fmt: skip
    """No image there: the worker stages the wheels itself, and checks those files."""
    url = index_serving(tmp_path / "index", b"OK = 'first build'\n")
    monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache"))
    settings.JAZZMINE_PIP_INDEX_URL = url
    ecommerce.backend = "bwrap"
    ecommerce.save(update_fields=["backend"])
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"],
                   dependencies=["jzlock==1.0"])  # fmt: skip
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)

    def prepare():
        run = run_create(sandbox=ecommerce, user=member, body=BODY, start=False)
        prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset())
        workdir_remove(prepared.runtime_dir)
        run.refresh_from_db()
        return run, prepared.request.secrets

    run, secrets = prepare()
    assert secrets == {} and "no admin has accepted the wheels" in run.notes[-1]
    staged = sandbox_builder(ecommerce).stage(ecommerce.name, tmp_path / "staged")
    type(ecommerce).objects.filter(pk=ecommerce.pk).update(accepted_wheels=staged)
    run, secrets = prepare()
    assert secrets.get("SHOP_KEY") == SHOP and run.notes == []


# A tool of the admin's, always allowed: it tells which build of the wheel its process
# imported, and whether the run's secret reached that process.
PEEK = (
    "def peek() -> ToolResponse:\n"
    "    import os\n"
    "    import jzlock\n"
    "    return ToolResponse(success=True, data=[jzlock.OK, os.environ.get('SHOP_KEY')])\n"
)


def test_a_ready_sandbox_of_an_image_made_again_gets_no_secret(
    shop, member, admin, tmp_path, monkeypatch, docker_client
) -> None:
    """The check is of the image the run's sandbox was made from, not of what its tag names.

    A warm sandbox started from the first image stays ready when that image is removed (a
    prune); the image is made again under the same tag while the index serves another file,
    and the admin accepts that file. The check read the tag (the new image, accepted) and the
    run went to the ready sandbox: the first file, never accepted, got SHOP_KEY. Now the
    sandbox's own image is read; one its tag no longer names goes, with the others ready
    beside it, and the run takes one of the current image.
    """
    tool_create(sandbox=shop, name="peek", description="Peek.", source=PEEK,
                always_allow=True, actor=admin, author=admin)  # fmt: skip
    first = build(shop, admin)
    executor = RunExecutor(pool_size=1)

    def peek() -> tuple[list[object], list[str]]:
        run = run_create(sandbox=shop, user=member, body="emit_result(peek().data)\n",
                         start=False)  # fmt: skip
        assert executor.submit(run.pk, worker="w1@test").result(timeout=300) == RunStatus.SUCCEEDED
        run.refresh_from_db()
        return RunEvent.objects.get(run_id=run.pk, type="result").data, run.notes

    def ready() -> bool:  # the pool's next sandbox, made from the image the tag names now
        return sum(pool.ready_count for pool in list(executor._pools.values())) >= 1

    try:
        executor.learn_images()
        data, notes = peek()  # nobody accepted the first file: no secret
        assert data == ["first build", None] and "no admin has accepted" in notes[-1]
        wait_until(ready, timeout=120)

        # The first image goes (its ready sandbox stays); the index serves another file.
        index_serving(tmp_path / "index", b"OK = 'second build'\n")
        monkeypatch.setenv("JAZZMINE_CACHE_DIR", str(tmp_path / "cache-2"))
        docker_client.images.remove(first.tag, force=True)
        second = build(shop, admin)
        assert second.tag == first.tag and second.wheels != first.wheels
        client = browser(admin)
        action, shown = accept_form(client, shop)
        assert shown["wheels"] == [wheels_digest(second.wheels)]
        assert client.post(action, shown).status_code == 302

        # Twice: the stale sandbox went, and the pool refills from the current image.
        for _ in range(2):
            data, notes = peek()
            assert data == ["second build", SHOP] and notes == []
            wait_until(ready, timeout=120)
    finally:
        executor.shutdown()

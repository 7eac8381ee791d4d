"""Accept binds the wheel files the sandbox page listed, never files a build reported since.

The form carries the digest of the wheel list it showed; another digest (a rebuild that fetched
other files meanwhile, or a page that listed none) is refused, with nothing accepted.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine.sandbox.wheels import wheels_digest
from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.services import registry_for_sandbox, sandbox_update

pytestmark = pytest.mark.django_db

SEEN = ["jzlock-1.0-py3-none-any.whl " + "a" * 64]
SWAPPED = ["jzlock-1.0-py3-none-any.whl " + "b" * 64]


def built(sandbox, wheels: list[str]) -> ImageBuild:
    """A finished build of the sandbox as it is now, as a worker records it."""
    registry = registry_for_sandbox(sandbox)
    return ImageBuild.objects.create(
        sandbox=sandbox, checksum=registry.sandbox_checksum(sandbox.name),
        digest=registry.sandbox_digest(sandbox.name), tag="t", status=BuildStatus.SUCCEEDED,
        wheels=wheels,
    )  # fmt: skip


def post(client: Client, sandbox, wheels: str):
    url = f"/catalog/sandboxes/{sandbox.pk}/accept-dependencies/"
    return client.post(url, {"dependency": list(sandbox.dependencies), "wheels": wheels},
                       follow=True)  # fmt: skip


def test_a_digest_other_than_the_page_showed_is_refused(ecommerce, admin) -> None:
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0"])
    client = Client()
    client.force_login(admin)
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert 'id="wheels-unbuilt"' in page and 'name="wheels" value=""' in page

    built(ecommerce, SEEN)
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert SEEN[0] in page and wheels_digest(SEEN) in page
    built(ecommerce, SWAPPED)  # a rebuild fetched another file while the admin read
    response = post(client, ecommerce, wheels_digest(SEEN))
    assert "changed since you looked" in response.content.decode()
    ecommerce.refresh_from_db()
    assert ecommerce.accepted_wheels is None

    assert "changed since you looked" in post(client, ecommerce, "").content.decode()
    post(client, ecommerce, wheels_digest(SWAPPED))
    ecommerce.refresh_from_db()
    assert ecommerce.accepted_wheels == SWAPPED


def test_an_admins_edit_of_the_list_binds_no_file(ecommerce, admin) -> None:
    built(ecommerce, SEEN)
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0"])
    ecommerce.refresh_from_db()
    assert ecommerce.dependencies_accepted and ecommerce.accepted_wheels is None


def marks(page: str) -> dict[str, str]:
    """Return what the page says of each wheel file it lists: {file line: note}."""
    import re

    listed = page.split('id="built-wheels"', 1)[1].split("</ul>", 1)[0]
    found = re.findall(
        r'<li><code>([^<]*)</code> <span class="wheel-note wheel-(\w+)">([^<]*)</span>', listed
    )
    return {line: f"{kind}: {note}" for line, kind, note in found}


def test_the_page_says_which_files_were_accepted_before_and_which_are_new(
    ecommerce, admin, member
) -> None:
    """After a dependency changed, the admin reads the few files no one accepted, not all."""
    from jazzmine_web.catalog.models import Tool

    lock, util = SEEN[0], "jzutil-2.0-py3-none-any.whl " + "c" * 64
    extra, fresh = (
        "jzextra-3.0-py3-none-any.whl " + "d" * 64,
        "jzfresh-1.0-py3-none-any.whl " + "e" * 64,
    )
    sandbox_update(sandbox=ecommerce, actor=admin, dependencies=["jzlock==1.0", "jzutil==2.0"])
    built(ecommerce, [lock, util])
    client = Client()
    client.force_login(admin)
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert marks(page) == {lock: "new: new", util: "new: new"}
    post(client, ecommerce, wheels_digest([lock, util]))
    ecommerce.refresh_from_db()
    assert ecommerce.accepted_wheels == [lock, util]

    # A member adds a dependency; the rebuild fetched another file for the same pinned jzlock.
    sandbox_update(sandbox=ecommerce, actor=member,
                   dependencies=["jzlock==1.0", "jzutil==2.0", "jzextra==3.0", "jzfresh==1.0"])  # fmt: skip
    ecommerce.refresh_from_db()
    swapped = SWAPPED[0]
    built(ecommerce, sorted([swapped, util, extra, fresh]))
    # jzextra was accepted for trials of a tool's current code; jzfresh only for code since
    # changed, which says nothing of it.
    tools = list(Tool.objects.filter(sandbox=ecommerce).order_by("name"))
    trialled, stale = tools[0], tools[1]
    Tool.objects.filter(pk=trialled.pk).update(
        trial_accepted_wheels=[extra], trial_accepted_code_digest=trialled.code_digest
    )
    Tool.objects.filter(pk=stale.pk).update(
        trial_accepted_wheels=[fresh], trial_accepted_code_digest="0" * 64
    )
    for viewer in (admin, member):  # the member reads what the admin reads
        client.force_login(viewer)
        for _ in range(2):
            page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
            assert marks(page) == {
                swapped: "other: another file than the one accepted under this name",
                util: "runs: accepted for this sandbox&#x27;s runs",
                extra: f"trials: accepted for trials of {trialled.name}",
                fresh: "new: new",
            }
    # The marks accept nothing: the files accepted are still the ones the admin accepted.
    ecommerce.refresh_from_db()
    assert ecommerce.accepted_wheels == sorted([lock, util])

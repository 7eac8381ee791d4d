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

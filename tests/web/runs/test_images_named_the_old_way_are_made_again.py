"""A worker that holds only images named the old way (by sandbox name) makes the new one.

Images were filed by sandbox name before they were filed by sandbox id. After the upgrade a
worker still knows the old tags: a run must not take one for its own (it may be another
team's), and must not fail either; its sandbox's image is made under the new name.
"""

from __future__ import annotations

import pytest

from jazzmine.sandbox import SandboxBuilder
from jazzmine_web.catalog.services import registry_for_sandbox, sandbox_builder
from jazzmine_web.runs import preparation
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db


def test_a_run_whose_worker_knows_only_the_old_name_makes_its_image(ecommerce, member):
    old = SandboxBuilder(registry_for_sandbox(ecommerce)).image_tag(ecommerce.name)
    assert old.startswith("jazzmine/sandbox-ecommerce:")
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    prepared = preparation.run_claim_prepare(
        run_id=run.pk, worker="w1@host", known_images=frozenset({old})
    )
    assert prepared is not None and not prepared.image_known
    assert prepared.image == sandbox_builder(ecommerce).image_tag(ecommerce.name) != old
    assert prepared.image_source is not None  # the worker makes it (or finds it) first
    run.refresh_from_db()
    assert run.status == RunStatus.PREPARING

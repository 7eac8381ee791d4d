"""Sandbox numbers stay inside the deployment's bounds: forms refuse, runs clamp."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.catalog.services import sandbox_update
from tests.web.helpers import sandbox_form

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("memory_mb", 10**12), ("memory_mb", 4097), ("memory_mb", 1), ("cpus", 64),
        ("cpus", 0.001), ("pids_limit", 10**9), ("timeout_seconds", 86400),
        ("max_output_bytes", 10**12), ("bash_max_commands", 10**12),
        ("bash_timeout_seconds", 10**6),
    ],
)  # fmt: skip
def test_the_sandbox_form_refuses_a_number_outside_the_bounds(
    client, team_admin, empty_sandbox, field, value
) -> None:
    client.force_login(team_admin)
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", sandbox_form(**{field: value})
    )
    assert response.status_code == 422
    assert response.context["form"].errors[field]
    empty_sandbox.refresh_from_db()
    assert getattr(empty_sandbox, field) != value


def test_the_maxima_are_deployment_settings(client, team_admin, empty_sandbox, settings) -> None:
    settings.JAZZMINE_MAX_SANDBOX_MEMORY_MB = 8192
    client.force_login(team_admin)
    url = f"/catalog/sandboxes/{empty_sandbox.pk}/edit/"
    assert client.post(url, sandbox_form(memory_mb=8192)).status_code == 302
    settings.JAZZMINE_MAX_SANDBOX_MEMORY_MB = 1024
    with pytest.raises(ValidationError, match="between 32 and 1024"):
        sandbox_update(sandbox=empty_sandbox, memory_mb=2048)


def test_a_stored_value_outside_the_bounds_is_clamped_before_it_reaches_a_run(
    empty_sandbox,
) -> None:
    # The largest values the columns hold on every database (PostgreSQL's integer is 32 bits).
    Sandbox.objects.filter(pk=empty_sandbox.pk).update(
        memory_mb=2**31 - 1, cpus=1000.0, pids_limit=2**31 - 1, timeout_seconds=10**9,
        max_output_bytes=2**31 - 1,
    )  # fmt: skip
    empty_sandbox.refresh_from_db()
    config = empty_sandbox.to_config()
    assert (config.memory_mb, config.cpus, config.pids_limit) == (4096, 4.0, 1024)
    assert config.timeout_seconds == 600.0 and config.max_output_bytes == 50 * 1024 * 1024


def test_bash_limits_are_clamped_when_saved(empty_sandbox) -> None:
    empty_sandbox.bash_max_commands = 10**12
    empty_sandbox.save()
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.bash_max_commands == 1_000_000


def test_a_script_tool_timeout_is_bounded_too(empty_sandbox) -> None:
    from jazzmine.scripttools import ScriptTool
    from jazzmine_web.catalog.services import script_tool_save

    tool = ScriptTool(name="slow", description="Sleep for tests.", source="print(1)\n",
                      timeout=10**6)  # fmt: skip
    with pytest.raises(ValidationError, match="timeout must be between"):
        script_tool_save(sandbox=empty_sandbox, tool=tool)


def test_a_whole_number_field_says_its_bounds_as_whole_numbers(
    client, team_admin, empty_sandbox
) -> None:
    # It said "less than or equal to 52428800.0", and the browser's own message the same.
    client.force_login(team_admin)
    url = f"/catalog/sandboxes/{empty_sandbox.pk}/edit/"
    response = client.post(url, sandbox_form(max_output_bytes=10**12))
    (said,) = response.context["form"].errors["max_output_bytes"]
    assert said == "Ensure this value is less than or equal to 52428800."
    page = client.get(url).content.decode()
    assert 'name="max_output_bytes"' in page and 'max="52428800"' in page
    assert 'min="1000"' in page and "52428800.0" not in page
    # A fractional field keeps its fractions.
    (cpus,) = client.post(url, sandbox_form(cpus=64)).context["form"].errors["cpus"]
    assert cpus == "Ensure this value is less than or equal to 4.0."

"""Bash bodies get a light check before they run, and the sandbox's bash limits while they run."""

from __future__ import annotations

import pytest
from django.test import override_settings

from jazzmine_web.catalog.services import sandbox_update
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import RunRefused, run_create


def test_an_empty_bash_script_is_refused(sandbox, member) -> None:
    with pytest.raises(RunRefused, match="empty"):
        run_create(sandbox=sandbox, user=member, body="  \n", language="bash", start=False)


@override_settings(JAZZMINE_MAX_BASH_CHARS=10)
def test_a_bash_script_over_the_size_limit_is_refused(sandbox, member) -> None:
    with pytest.raises(RunRefused, match="limit 10"):
        run_create(sandbox=sandbox, user=member, body="echo 12345678", language="bash", start=False)


def test_a_bash_script_with_a_nul_is_refused_at_its_line(sandbox, member) -> None:
    with pytest.raises(RunRefused, match=r"Line 2: .*NUL"):
        run_create(
            sandbox=sandbox, user=member, body="echo a\necho \x00", language="bash", start=False
        )


def test_a_bash_script_is_stored_as_written(sandbox, member) -> None:
    body = "echo hi | jq -R .\n"
    run = run_create(sandbox=sandbox, user=member, body=body, language="bash", start=False)
    assert (run.language, run.body, run.script, run.body_offset) == ("bash", body, body, 0)
    assert Run.objects.count() == 1


def test_unknown_languages_are_refused(sandbox, member) -> None:
    with pytest.raises(RunRefused, match="'ruby'"):
        run_create(sandbox=sandbox, user=member, body="puts 1", language="ruby", start=False)


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_the_sandbox_loop_limit_stops_a_long_loop(sandbox, member, base_image, worker) -> None:
    sandbox_update(sandbox=sandbox, bash_max_loop_iterations=5)
    body = "for i in $(seq 1 50); do echo $i; done\n"
    run = run_create(sandbox=sandbox, user=member, body=body, language="bash")
    assert worker.future(run.pk).result(timeout=300) == RunStatus.FAILED
    run.refresh_from_db()
    assert "loop" in (run.result["stderr"] + run.error).lower()


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_run_stopped_at_a_limit_says_its_output_is_lost(
    sandbox, member, base_image, worker, client
) -> None:
    # bashkit returns no stdout of a script it stops: the pane said "(no output)" of a script
    # that had printed "before-limit".
    sandbox_update(sandbox=sandbox, bash_max_loop_iterations=5)
    body = "echo before-limit\nfor i in $(seq 1 50); do echo $i; done\n"
    run = run_create(sandbox=sandbox, user=member, body=body, language="bash")
    assert worker.future(run.pk).result(timeout=300) == RunStatus.FAILED
    client.force_login(member)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "no output shown: bashkit returns none of a script it stopped" in page
    assert "(no output)" not in page

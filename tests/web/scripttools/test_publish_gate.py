"""A script tool reaches LLMs only once published, and only a passed trial lets it publish."""

from __future__ import annotations

import pytest
from django.urls import reverse

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.selectors import tools_prompt_payload
from jazzmine_web.catalog.services import registry_for_sandbox, script_tool_save
from jazzmine_web.scripttools.models import TrialRun
from jazzmine_web.scripttools.services import PublishRefused, script_tool_publish
from tests.web.helpers import code_accepted_mark

from .conftest import rsi_tool, trial_recorded


def _pass(row) -> TrialRun:
    """Record a passed trial of the row's current code (the trial tests run real ones)."""
    return trial_recorded(row)


def test_a_new_script_tool_is_not_in_the_prompt_or_the_registry(rsi_row, sandbox) -> None:
    assert not rsi_row.published
    assert registry_for_sandbox(sandbox).tools(sandbox.name) == []
    assert "calculate_rsi" not in tools_prompt_payload(sandbox)["prompt"]


def test_it_refuses_to_publish_without_a_passed_trial(rsi_row) -> None:
    trial_recorded(rsi_row, status="non_json", passed=False)
    with pytest.raises(PublishRefused, match="no trial run of its current code"):
        script_tool_publish(tool=rsi_row)
    rsi_row.refresh_from_db()
    assert not rsi_row.published


def test_a_passed_trial_lets_it_publish_into_the_prompt(rsi_row, sandbox) -> None:
    _pass(rsi_row)
    script_tool_publish(tool=rsi_row)
    registered = registry_for_sandbox(sandbox).get_tool(sandbox.name, "calculate_rsi")
    assert registered.checksum == rsi_row.checksum
    assert "calculate_rsi" in tools_prompt_payload(sandbox)["prompt"]


def test_new_code_takes_it_out_again_until_a_new_trial_passes(rsi_row, sandbox, member) -> None:
    _pass(rsi_row)
    script_tool_publish(tool=rsi_row)
    changed = rsi_tool(source=rsi_tool().source.replace("50.0", "51.0"))
    row, change = script_tool_save(sandbox=sandbox, tool=changed, existing=rsi_row, author=member)
    assert change.new_version is not None and change.new_version.number == 2
    assert not row.published
    with pytest.raises(PublishRefused):
        script_tool_publish(tool=row)  # the old pass was for the old checksum


def test_the_publish_button_answers_with_the_reason(client, member, rsi_row) -> None:
    client.force_login(member)
    url = reverse("scripttools:publish", args=[rsi_row.pk])
    refused = client.post(url, {"published": "1"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 422
    assert b"cannot be published" in refused.content
    _pass(rsi_row)
    page = client.get(reverse("catalog:tool", args=[rsi_row.pk])).content.decode()
    assert 'id="publish-button" >' in page or 'id="publish-button">' in page  # enabled now
    done = client.post(url, {"published": "1"}, HTTP_HX_REQUEST="true")
    assert done.status_code == 200 and b'data-published="yes"' in done.content
    withdrawn = client.post(url, {"published": "0"}, HTTP_HX_REQUEST="true")
    assert b'data-published="no"' in withdrawn.content


def test_the_review_policy_reads_always_allow_of_published_script_tools_only(
    rsi_row, sandbox
) -> None:
    from jazzmine_web.runs.services import run_tools_called

    body = "calculate_rsi --symbol AAPL | jq .rsi\n"
    assert run_tools_called(sandbox=sandbox, body=body, language="bash") == []
    _pass(rsi_row)
    script_tool_publish(tool=rsi_row)
    called = run_tools_called(sandbox=sandbox, body=body, language="bash")
    # tool.json asks for always_allow; it counts only once an admin accepts this code.
    assert called[0]["always_allow"] is False
    code_accepted_mark(Tool.objects.filter(pk=rsi_row.pk))
    called = run_tools_called(sandbox=sandbox, body=body, language="bash")
    assert called == [
        {
            "name": "calculate_rsi",
            "kind": "script",
            "always_allow": True,
            "secrets": [],
            "code_digest": Tool.objects.get(pk=rsi_row.pk).code_digest,
            "certain": True,
            "why": "called as a command on line 1",
        }
    ]
    python = run_tools_called(sandbox=sandbox, body='r = calculate_rsi(symbol="A")\n')
    assert [t["name"] for t in python] == ["calculate_rsi"]


def test_who_published_and_withdrew_it_is_in_the_audit_trail(client, member, rsi_row) -> None:
    # Publishing puts a tool before every LLM of the sandbox: the trail says who, and when.
    from jazzmine_web.reviews.models import AuditEntry

    _pass(rsi_row)
    client.force_login(member)
    url = reverse("scripttools:publish", args=[rsi_row.pk])
    for published in ("1", "0", "1"):
        assert client.post(url, {"published": published}).status_code == 302
    entries = AuditEntry.objects.filter(data__target="tool calculate_rsi").order_by("pk")
    changes = [e.data["changes"].get("published") for e in entries]
    assert changes[-3:] == [[False, True], [True, False], [False, True]], changes
    assert {e.actor_user_id for e in entries.reverse()[:3]} == {member.pk}
    # The same press again changes nothing, and says nothing.
    assert client.post(url, {"published": "1"}).status_code == 302
    assert AuditEntry.objects.filter(data__target="tool calculate_rsi").count() == entries.count()

"""The demo is created once; restarting never undoes what the team changed."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from jazzmine_web.catalog.management.commands.seed_demo import DEMO_ALWAYS_ALLOWED
from jazzmine_web.catalog.models import SecretValue, Tool, ToolVersion
from jazzmine_web.catalog.services import secret_value_set, tool_update
from jazzmine_web.teams.models import Membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedded_demo")]


def seed(capsys, *args: str) -> str:
    call_command("seed_demo", *args)
    return capsys.readouterr().out


def test_it_creates_an_admin_and_a_reviewer_who_can_log_in(client, capsys) -> None:
    out = seed(capsys)
    assert "Log in as 'demo' with password 'jazzmine-demo'" in out
    assert "Log in as 'reviewer' with password 'jazzmine-review'" in out
    assert "created: get_orders" in out
    assert client.login(username="demo", password="jazzmine-demo")
    assert client.login(username="reviewer", password="jazzmine-review")
    roles = {m.user.username: m.role for m in Membership.objects.select_related("user")}
    assert roles == {"demo": "admin", "reviewer": "reviewer"}


def test_a_second_start_changes_nothing(capsys) -> None:
    seed(capsys)
    out = seed(capsys)
    assert "Kept demo sandbox ecommerce" in out
    assert "created:" not in out and "changed (new version)" not in out
    # Each lookup's second version is the one its admin made always-allowed.
    assert Tool.objects.count() == 5 and ToolVersion.objects.count() == 5 + len(DEMO_ALWAYS_ALLOWED)


def test_any_script_may_call_the_lookups_and_only_a_person_may_let_one_change_things(
    capsys,
) -> None:
    seed(capsys)
    allowed = {tool.name for tool in Tool.objects.all() if tool.is_always_allowed}
    assert allowed == set(DEMO_ALWAYS_ALLOWED) == {"get_orders", "get_user", "search_products"}


def test_a_restart_keeps_edited_tools_secrets_and_passwords(client, capsys) -> None:
    seed(capsys)
    tool = Tool.objects.get(name="get_orders")
    edited = tool.source.replace("int(limit)", "int(limit or 0)")
    assert edited != tool.source
    tool_update(tool=tool, source=edited, secrets=["SHOP_DB_URL"], note="team edit")
    secret_value_set(sandbox=tool.sandbox, name="SHOP_DB_URL", value="postgres://x", user=None)
    demo = Membership.objects.get(user__username="demo").user
    demo.set_password("our own password")
    demo.save()
    versions = ToolVersion.objects.filter(tool=tool).count()

    seed(capsys)
    seed(capsys)

    tool.refresh_from_db()
    assert "int(limit or 0)" in tool.source
    assert tool.secrets == ["SHOP_DB_URL"]
    assert ToolVersion.objects.filter(tool=tool).count() == versions
    assert SecretValue.objects.filter(name="SHOP_DB_URL").exists()
    assert client.login(username="demo", password="our own password")
    assert not client.login(username="demo", password="jazzmine-demo")


def test_reset_puts_the_demo_back_explicitly(client, capsys) -> None:
    seed(capsys)
    tool = Tool.objects.get(name="get_orders")
    tool_update(tool=tool, source=tool.source.replace("int(limit)", "int(limit or 1)"), note="edit")
    demo = Membership.objects.get(user__username="demo").user
    demo.set_password("our own password")
    demo.save()

    out = seed(capsys, "--reset")

    assert "Reset team admin" in out
    assert "changed (new version): get_orders" in out
    assert client.login(username="demo", password="jazzmine-demo")
    # The team's version is history, not lost: imported, always allowed, edited, reset.
    assert ToolVersion.objects.filter(tool=tool).count() == 4
    assert Tool.objects.get(pk=tool.pk).is_always_allowed  # the reset keeps the lookup unread


def test_the_demo_admin_accepts_the_demos_code_so_its_secrets_reach_it(capsys) -> None:
    seed(capsys)
    assert all(tool.code_accepted for tool in Tool.objects.all())
    tool = Tool.objects.get(name="send_receipt")
    assert tool.always_allow_accepted_by.username == "demo"
    # A reset accepts the demo's code again, changed back or never changed.
    Tool.objects.update(always_allow_accepted_checksum="")
    seed(capsys, "--reset")
    assert all(tool.code_accepted for tool in Tool.objects.all())


def test_on_a_shared_database_it_refuses_the_passwords_the_readme_prints(
    capsys, settings, monkeypatch
) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management.base import CommandError

    settings.SHARED_DATABASE = True
    with pytest.raises(CommandError, match="JAZZMINE_DEMO_PASSWORD"):
        seed(capsys)
    monkeypatch.setenv("JAZZMINE_DEMO_PASSWORD", "Our-own-demo-pass-1")
    with pytest.raises(CommandError, match="'jazzmine-review'"):
        seed(capsys)  # the reviewer's is the README's still
    monkeypatch.setenv("JAZZMINE_DEMO_REVIEWER_PASSWORD", "12345678")
    with pytest.raises(CommandError, match=r"entirely numeric|too common"):
        seed(capsys)  # a password of their own, but one the validators refuse
    assert not get_user_model().objects.exists()  # nothing was made meanwhile
    monkeypatch.setenv("JAZZMINE_DEMO_REVIEWER_PASSWORD", "Our-own-review-pass-2")
    out = seed(capsys)
    assert "Log in as 'demo' with password 'Our-own-demo-pass-1'" in out
    # Started again without them, it keeps the logins as they are and asks for nothing.
    monkeypatch.delenv("JAZZMINE_DEMO_PASSWORD")
    monkeypatch.delenv("JAZZMINE_DEMO_REVIEWER_PASSWORD")
    assert "Kept demo sandbox" in seed(capsys)
    with pytest.raises(CommandError, match="JAZZMINE_DEMO_PASSWORD"):
        seed(capsys, "--reset")  # a reset sets them again: the README's are refused


def test_reset_keeps_the_tokens_of_a_password_it_did_not_change(capsys) -> None:
    """A new hash of the same password revoked every demo token, said "the password was
    changed", and withdrew what their agents had sent; a reset that puts back a password
    someone did change still ends the tokens made with the other one, and says why."""
    from django.test import Client

    from jazzmine_web.teams.services import api_token_create

    seed(capsys)
    demo = Membership.objects.get(user__username="demo").user
    agent = Client(
        headers={"Authorization": f"Bearer {api_token_create(user=demo, name='ci').raw}"}
    )
    for _ in range(2):
        seed(capsys, "--reset")
        assert agent.get("/api/v1/sandboxes/").status_code == 200
    demo.refresh_from_db()
    demo.set_password("our own password")
    demo.save()
    token = api_token_create(user=demo, name="after").raw
    seed(capsys, "--reset")
    answer = Client(headers={"Authorization": f"Bearer {token}"}).get("/api/v1/sandboxes/")
    assert answer.status_code == 401
    said = answer.json()["error"]["message"]
    assert "This API token was revoked on" in said and "(the password was changed)" in said
    unknown = Client(headers={"Authorization": "Bearer jzm_nothing"}).get("/api/v1/sandboxes/")
    assert unknown.json()["error"]["message"].startswith("No such API token.")

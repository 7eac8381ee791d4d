"""A sandbox's secrets are a list of names (non-empty text no longer than the column a value
is stored under) and its network is True or False, however they arrive: an import, the form,
the services. Anything else is refused naming the field, and nothing is stored.

`SandboxConfig(secrets=[1, None])` or `secrets=[{"a": 1}]` was stored, and then the sandbox's
page and its edit page answered 500 for good; `secrets="abc"` was stored as three secrets
'a', 'b', 'c'; `network=None` was an IntegrityError, a 500.
"""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, SecretValue
from jazzmine_web.catalog.services import sandbox_create, sandbox_update, tools_import
from tests.web.helpers import sandbox_form, sandbox_form_post, source_file

pytestmark = pytest.mark.django_db

LONGEST = SecretValue._meta.get_field("name").max_length
CONFIG = 'register_sandbox(SandboxConfig(name="s", {args}))\n'
# {case: (SandboxConfig's arguments, words the problem says)}
REFUSED = {
    "numbers and None": ("secrets=[1, None]", "secrets[0] must be a name"),
    "a dict": ('secrets=[{"a": 1}]', "secrets[0] must be a name"),
    "text, not a list": ('secrets="abc"', "secrets must be a list of names"),
    "an empty name": ('secrets=["KEY", ""]', "secrets[1] must be a name"),
    "a blank name": ('secrets=["  "]', "secrets[0] must be a name"),
    "a name too long": (f'secrets=["{"K" * (LONGEST + 1)}"]', f"at most {LONGEST}"),
    "network None": ("network=None", "network must be True or False"),
    "network as text": ('network="yes"', "network must be True or False"),
    "network as a number": ("network=1", "network must be True or False"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_an_import_refuses_it_naming_the_field(team, user, case: str) -> None:
    args, words = REFUSED[case]
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("s.py", CONFIG.format(args=args))], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert problem.startswith("s.py, line 1: ") and words in problem, problem
    assert not Sandbox.objects.exists()


def test_the_import_page_answers_422_and_the_sandbox_pages_still_answer(
    admin, empty_sandbox
) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    upload = SimpleUploadedFile(
        "s.py", CONFIG.format(args="secrets=[1, None]").replace('"s"', '"scratch"').encode()
    )
    response = client.post(
        "/catalog/import/", {"team": empty_sandbox.team.pk, "sandbox": "", "files": upload}
    )
    assert response.status_code == 422
    assert "secrets[0] must be a name" in response.content.decode()
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.secrets == []
    for page in ("", "edit/"):
        assert client.get(f"/catalog/sandboxes/{empty_sandbox.pk}/{page}").status_code == 200


@pytest.mark.parametrize(
    ("changes", "words"),
    [({"secrets": [1, None]}, "secrets[0] must be a name"),
     ({"secrets": "abc"}, "secrets must be a list of names"),
     ({"secrets": ["K" * (LONGEST + 1)]}, f"at most {LONGEST}"),
     ({"network": None}, "network must be True or False")],
    ids=["numbers", "text", "too long", "network None"],
)  # fmt: skip
def test_the_services_refuse_it(team, admin, empty_sandbox, changes: dict, words: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(words)):
        sandbox_update(sandbox=empty_sandbox, actor=admin, **changes)
    with pytest.raises(ValidationError, match=re.escape(words)):
        sandbox_create(team=team, name="other", actor=admin, **changes)
    empty_sandbox.refresh_from_db()
    assert (empty_sandbox.secrets, empty_sandbox.network) == ([], False)
    assert not Sandbox.objects.filter(name="other").exists()


def test_the_sandbox_form_refuses_a_name_too_long_for_its_value(admin, empty_sandbox) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/edit/",
        sandbox_form(secrets="SHOP_KEY\n" + "K" * (LONGEST + 1)),
    )
    assert response.status_code == 422
    assert f"at most {LONGEST}" in " ".join(response.context["form"].non_field_errors())
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.secrets == []


def test_names_of_the_longest_length_are_kept(admin, empty_sandbox) -> None:
    name = "K" * LONGEST
    assert sandbox_update(sandbox=empty_sandbox, actor=admin, secrets=[name], network=True)
    empty_sandbox.refresh_from_db()
    assert (empty_sandbox.secrets, empty_sandbox.network) == ([name], True)


def test_a_row_stored_before_the_rule_keeps_its_pages_and_an_edit_mends_it(
    admin, empty_sandbox
) -> None:
    Sandbox.objects.filter(pk=empty_sandbox.pk).update(secrets=[1, None, {"a": 1}, "", "KEY"])
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    for page in ("", "edit/"):
        assert client.get(f"/catalog/sandboxes/{empty_sandbox.pk}/{page}").status_code == 200
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.to_config().secrets == ["KEY"]  # nothing is given under the rest
    sandbox_form_post(client, empty_sandbox)
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.secrets == ["KEY"]

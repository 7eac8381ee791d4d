"""The worker's hot reads and claim (`studio.hotrows`) give exactly what the ORM gives.

They skip the ORM's compiler, so these tests hold them to the ORM: every field of every row,
its value and its type, on the database the suite runs on (SQLite, and PostgreSQL in the
second pass of scripts/test.sh), and a claim that two workers try at once is still decided by
the database. Values an attacker would write where a value goes stay values.
"""

from __future__ import annotations

import datetime
import uuid

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.db.models import Model
from django.utils import timezone

from jazzmine_web.catalog.models import SANDBOX, SANDBOX_SECRETS, SANDBOX_TOOLS, Sandbox, Tool
from jazzmine_web.catalog.selectors import sandbox_secret_values
from jazzmine_web.catalog.services import registry_for_sandbox
from jazzmine_web.catalog.services.secrets import secret_value_set
from jazzmine_web.runs.lifecycle import CLAIMABLE, run_claim, run_claimable
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.studio.hotrows import Rows

pytestmark = pytest.mark.django_db

ODD_TEXT = "naïve ☃ \"quoted\" 'single' \\ back\nline\x01 𝄞"


def same_row(hot: Model, orm: Model) -> None:
    """Assert two instances of one model hold equal values of the same types in every field."""
    assert type(hot) is type(orm)
    for field in orm._meta.concrete_fields:
        ours, theirs = getattr(hot, field.attname), getattr(orm, field.attname)
        assert ours == theirs, field.name
        assert type(ours) is type(theirs), field.name
    assert hot._state.adding is False and hot._state.db == orm._state.db


@pytest.fixture
def run(ecommerce, member) -> Run:
    """A queued run whose row uses every kind of column: JSON, datetimes, floats, nulls."""
    run = run_create(
        sandbox=ecommerce,
        user=member,
        body=f"emit_result({ODD_TEXT!r})\n",
        task=ODD_TEXT,
        start=False,
        allowed_tools=["get_user", "list_orders"],
    )
    Run.objects.filter(pk=run.pk).update(
        result={"nested": [1, 2.5, None, True, {"ünï": ODD_TEXT}]},
        first_event_ms=12.345678,
        warm=None,
        started_at=timezone.now() - datetime.timedelta(microseconds=123457),
    )
    return run


def test_a_queued_run_reads_as_the_orm_reads_it(run):
    hot = run_claimable(run_id=run.pk)
    assert hot is not None
    same_row(hot, Run.objects.get(pk=run.pk))
    assert hot.allowed_tools == ["get_user", "list_orders"]
    assert hot.result["nested"][4] == {"ünï": ODD_TEXT}
    assert hot.started_at.tzinfo is not None
    assert run_claimable(run_id=str(run.pk)) is not None  # as the task's argument: text


def test_a_sandbox_its_tools_and_secrets_read_as_the_orm_reads_them(ecommerce, team_admin):
    secret_value_set(sandbox=ecommerce, name="SHOP_TOKEN", value=ODD_TEXT, user=team_admin,
                     actor=team_admin)  # fmt: skip
    same_row(SANDBOX.get(ecommerce.pk), Sandbox.objects.get(pk=ecommerce.pk))
    hot_tools = SANDBOX_TOOLS.all(ecommerce.pk)
    orm_tools = list(Tool.objects.filter(sandbox=ecommerce).order_by("name"))
    assert [t.name for t in hot_tools] == sorted(t.name for t in orm_tools) and hot_tools
    for hot, orm in zip(hot_tools, orm_tools, strict=True):
        same_row(hot, orm)
    # The registry's cache keys on every column: the same rows hit the same registry.
    assert registry_for_sandbox(ecommerce, tools=hot_tools) is registry_for_sandbox(
        ecommerce, tools=orm_tools
    )
    (secret,) = SANDBOX_SECRETS.all(ecommerce.pk)
    same_row(secret, ecommerce.secret_values.get())
    assert sandbox_secret_values(ecommerce) == {"SHOP_TOKEN": ODD_TEXT}
    assert sandbox_secret_values(ecommerce, names=["SHOP_TOKEN", "OTHER"]) == {
        "SHOP_TOKEN": ODD_TEXT
    }
    assert sandbox_secret_values(ecommerce, names=["OTHER"]) == {}
    assert sandbox_secret_values(ecommerce, names=[]) == {}


def test_an_instance_read_here_saves_as_an_update(run):
    hot = run_claimable(run_id=run.pk)
    hot.task = "changed"
    hot.save(update_fields=["task"])
    assert Run.objects.count() == 1
    assert Run.objects.get(pk=run.pk).task == "changed"
    hot.refresh_from_db()
    assert hot.sandbox.name == "ecommerce"  # its relations load as an ORM instance's do


def test_a_claim_is_decided_once_and_stores_what_the_orm_would(run):
    assert run_claim(run_id=run.pk, worker="w1@host", running=True, backend="docker",
                     image="jazzmine/ecommerce:abc")  # fmt: skip
    assert not run_claim(run_id=run.pk, worker="w2@host")
    assert run_claimable(run_id=run.pk) is None  # not queued any more
    claimed = Run.objects.get(pk=run.pk)
    assert (claimed.status, claimed.worker) == (RunStatus.RUNNING, "w1@host")
    assert (claimed.backend, claimed.image) == ("docker", "jazzmine/ecommerce:abc")
    assert claimed.claimed_at == claimed.started_at == claimed.heartbeat_at
    assert abs(timezone.now() - claimed.claimed_at) < datetime.timedelta(seconds=5)


def test_a_run_someone_asked_to_stop_is_neither_read_nor_claimed(run):
    Run.objects.filter(pk=run.pk).update(cancel_reason="cancelled by alice")
    assert run_claimable(run_id=run.pk) is None
    assert not run_claim(run_id=run.pk, worker="w1@host")
    assert Run.objects.get(pk=run.pk).status == RunStatus.QUEUED


@pytest.mark.parametrize(
    "status",
    [
        "queued' OR '1'='1",
        "queued' --",
        'queued" OR "1"="1',
        "queued; UPDATE runs_run SET worker = 'x'",
        "QUEUED",
        "queued ",
        "queued\x00",
    ],
)
def test_what_an_attacker_writes_where_a_value_goes_matches_nothing(run, status):
    orm = _outcome(lambda: Run.objects.filter(pk=run.pk, status=status).first())
    if isinstance(orm, Exception):  # PostgreSQL refuses NUL in text: refused here alike
        assert type(_outcome(lambda: CLAIMABLE.get(run.pk, status, ""))) is type(orm)
        assert type(_outcome(lambda: CLAIMABLE.update(run.pk, status, "", worker="x"))) is type(orm)
        return
    assert CLAIMABLE.get(run.pk, status, "") is None
    assert CLAIMABLE.update(run.pk, status, "", worker="mallory") == 0
    assert not Run.objects.filter(worker="mallory").exists()
    assert Run.objects.get(pk=run.pk).status == RunStatus.QUEUED


def _outcome(fn):
    """Return what fn returns, or the database error it raised (its transaction kept usable)."""
    try:
        with transaction.atomic():
            return fn()
    except DatabaseError as exc:
        return exc


@pytest.mark.parametrize(
    "run_id", ["not-a-uuid", "' OR 1=1 --", "1", str(uuid.uuid4()) + "' OR '1'='1"]
)
def test_an_id_that_is_no_uuid_is_refused_as_the_orm_refuses_it(run, run_id):
    with pytest.raises(ValidationError):
        Run.objects.get(pk=run_id)
    with pytest.raises(ValidationError):
        run_claimable(run_id=run_id)
    with pytest.raises(ValidationError):
        run_claim(run_id=run_id, worker="w1@host")


def test_an_unknown_run_reads_as_none_and_claims_nothing(run):
    assert run_claimable(run_id=uuid.uuid4()) is None
    assert not run_claim(run_id=uuid.uuid4(), worker="w1@host")
    assert SANDBOX.get(10**9) is None
    assert SANDBOX_TOOLS.all(10**9) == []


def test_an_update_prepares_values_as_the_orm_does(run):
    at = timezone.now() - datetime.timedelta(days=3, microseconds=7)
    assert CLAIMABLE.update(
        run.pk, RunStatus.QUEUED, "", allowed_tools=[ODD_TEXT], heartbeat_at=at, warm=True
    ) == 1  # fmt: skip
    stored = Run.objects.get(pk=run.pk)
    assert (stored.allowed_tools, stored.heartbeat_at, stored.warm) == ([ODD_TEXT], at, True)


def test_a_shape_is_checked_where_it_is_used():
    with pytest.raises(TypeError, match="3 values expected, 2 given"):
        CLAIMABLE.get(uuid.uuid4(), RunStatus.QUEUED)
    with pytest.raises(ValueError, match="not a column"):
        Rows(Sandbox, where=("runs",)).all(1)  # a relation's far end has no column here


def test_two_rows_for_one_get_are_an_error(ecommerce, member):
    for _ in range(2):
        run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    with pytest.raises(Run.MultipleObjectsReturned):
        Rows(Run, where=("status",)).get(RunStatus.QUEUED)


def _read_for(user, run_id):
    """Return what `run_for_user` and the queryset it replaced give (or raise) for one id."""
    from jazzmine_web.runs.selectors import run_for_user, runs_for_user

    def outcome(fn):
        try:
            return _outcome(fn)
        except ValidationError as exc:  # text that is no UUID names no run
            return exc

    hot = outcome(lambda: run_for_user(user, run_id))
    orm = outcome(lambda: runs_for_user(user).filter(pk=run_id).first())
    return hot, orm


def test_a_run_is_read_for_a_person_exactly_as_the_queryset_reads_it(run, ecommerce, member, team):
    """Who may see a run, by fixed-shape reads, is who the three-join queryset lets see it."""
    from django.contrib.auth.models import AnonymousUser

    from jazzmine_web.teams.models import Membership, Role
    from jazzmine_web.teams.services import membership_set
    from tests.web.helpers import rival_team, teammate

    _rival, rex, rival_sandbox, _token = rival_team("rival-token")
    theirs = run_create(sandbox=rival_sandbox, user=rex, body="emit_result(1)\n", start=False)
    reviewer = teammate(team, Role.REVIEWER, username="rita")
    admin = teammate(team, Role.ADMIN, username="adele")
    removed = teammate(team, Role.MEMBER, username="gone")
    Membership.objects.filter(user=removed).delete()
    moved = teammate(team, Role.MEMBER, username="moved")
    Membership.objects.filter(user=moved).delete()
    membership_set(team=_rival, user=moved, role=Role.MEMBER)
    inactive = teammate(team, Role.MEMBER, username="idle")
    inactive.is_active = False
    inactive.save()
    people = [member, reviewer, admin, removed, moved, inactive, rex, AnonymousUser()]
    ids = [
        run.pk, str(run.pk), str(run.pk).upper(), run.pk.hex, f"{{{run.pk}}}", f"urn:uuid:{run.pk}",
        theirs.pk, str(theirs.pk), uuid.uuid4(), run.pk.int, 0, -1,
        "not-a-uuid", "", " ", f"{run.pk}' OR '1'='1", f"{run.pk}\x00",
    ]  # fmt: skip
    seen = 0
    for person in people:
        for run_id in ids:
            hot, orm = _read_for(person, run_id)
            where = f"{getattr(person, 'username', 'anonymous')} {run_id!r}"
            if isinstance(orm, Exception) or orm is None:
                assert type(hot) is type(orm), where
                continue
            assert hot is not None, where
            same_row(hot, orm)
            same_row(hot.sandbox, orm.sandbox)
            same_row(hot.sandbox.team, orm.sandbox.team)
            assert hot.created_by == orm.created_by, where
            seen += 1
    # Both reads do let people see runs (so a wrong answer would show): the team's four
    # members (the inactive one too: signing in is the session's check) read its run by six
    # spellings of its id and the integer it is, and rex and `moved` their new team's by two.
    assert seen == 4 * 7 + 2 * 2, seen


def test_a_run_whose_sandbox_went_to_another_team_is_no_longer_read(run, ecommerce, member):
    from jazzmine_web.runs.selectors import run_for_user
    from tests.web.helpers import rival_team

    rival, _rex, _sandbox, _token = rival_team("rival-token")
    assert run_for_user(member, run.pk) is not None
    Sandbox.objects.filter(pk=ecommerce.pk).update(team=rival, name="moved-away")
    hot, orm = _read_for(member, run.pk)
    assert hot is None and orm is None


def test_a_sandbox_is_read_for_a_person_exactly_as_the_queryset_reads_it(ecommerce, member, team):
    """`sandbox_for_user` lets in whom `sandboxes_for_user` lets in, role by role."""
    from django.contrib.auth.models import AnonymousUser

    from jazzmine_web.catalog.selectors import sandbox_for_user, sandboxes_for_user
    from jazzmine_web.teams.models import Role
    from tests.web.helpers import rival_team, teammate

    _rival, rex, rival_sandbox, _token = rival_team("rival-token")
    people = [
        member, teammate(team, Role.REVIEWER, username="rita"),
        teammate(team, Role.ADMIN, username="adele"), rex, AnonymousUser(),
    ]  # fmt: skip
    ids = [ecommerce.pk, str(ecommerce.pk), rival_sandbox.pk, 10**6]
    seen = 0
    for person in people:
        for role in Role.values:
            for sandbox_id in ids:
                hot = sandbox_for_user(person, sandbox_id, role=role)
                orm = sandboxes_for_user(person, role=role).filter(pk=sandbox_id).first()
                if orm is None:
                    assert hot is None, (person, role, sandbox_id)
                    continue
                same_row(hot, orm)
                same_row(hot.team, orm.team)
                seen += 1
    # member: its team's sandbox by two spellings, as member; rita as member and reviewer;
    # adele and rex (their own teams') in all three roles.
    assert seen == 2 * 1 + 2 * 2 + 2 * 3 + 1 * 3, seen
    # What no column holds names no sandbox: no 500 from the database, no True as 1.
    for hostile in [10**20, -1, True, " 7", "7.0", "²", None, "", [ecommerce.pk], 1.0]:
        assert sandbox_for_user(member, hostile) is None, hostile

"""Admin for teams, memberships and API tokens; no side door around team roles or tokens.

A role decides who changes what review means in a team's sandboxes, so the model permission
alone does not let a staff user hand out roles: memberships of a team are changed by its
admins (or a superuser). Tokens are issued by their owner, where the raw value is shown once;
here they are shown, and revoked through the service (which stops their webhooks too).

A model permission is no team role either: `TeamRowsAdmin` keeps every staff user who is not a
superuser to the rows of the teams they are in (as the studio's pages do), and `OwnRowsAdmin`
to their own rows (tokens, webhooks, LLM settings: their owner's alone in the studio). The
other apps' admins build on them.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import ForeignKey, QuerySet
from django.http import HttpRequest

from . import (
    admin_accounts,  # noqa: F401  (registers the people and groups admin)
    admin_logins,  # noqa: F401  (registers login throttling's admin)
)
from .admin_accounts import accounts_in_sight
from .admin_rows import RefusedNotMissing
from .models import ApiToken, Membership, RevokeReason, Role, Team
from .selectors import team_ids_with_role, user_has_team_role
from .services import api_token_revoke


def _superuser(request: HttpRequest) -> bool:
    return bool(getattr(request.user, "is_superuser", False))


class ScopedRowsAdmin(RefusedNotMissing, admin.ModelAdmin):
    """An admin whose staff users (superusers aside) reach only some rows (`scoped`).

    A row outside them is refused (403) by its pages (change, history, delete), as a row one
    may see but not change is: not shown as missing, which would read as "deleted".
    """

    def scoped(self, request: HttpRequest, rows: QuerySet[Any]) -> QuerySet[Any]:
        raise NotImplementedError

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        rows = super().get_queryset(request)
        return rows if _superuser(request) else self.scoped(request, rows)


class TeamRowsAdmin(ScopedRowsAdmin):
    """Rows that belong to a team: a staff user sees, changes and picks only their teams' rows.

    Without this the admin's model permissions reached every team: its lists, filters, pages
    and history, the team a new row goes into, and (the services checking only admin-only
    fields) the tool code and dependencies other teams' runs load. A superuser passes every
    team check, here as in the studio.
    """

    # The path from a row to its team's id, as a queryset filter names it.
    team_path: str = "team"

    def scoped(self, request: HttpRequest, rows: QuerySet[Any]) -> QuerySet[Any]:
        return rows.filter(**{f"{self.team_path}__in": team_ids_with_role(user=request.user)})

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> Any:
        # A choice a subclass narrowed already (to the teams one administers) stays narrower.
        if db_field.related_model is Team and "queryset" not in kwargs and not _superuser(request):
            kwargs["queryset"] = Team.objects.filter(pk__in=team_ids_with_role(user=request.user))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class OwnRowsAdmin(ScopedRowsAdmin):
    """Rows that are one person's: a staff user sees and changes only their own."""

    # The path from a row to its owner, as a queryset filter names it.
    owner_path: str = "user"

    def scoped(self, request: HttpRequest, rows: QuerySet[Any]) -> QuerySet[Any]:
        return rows.filter(**{self.owner_path: request.user})


def _team_admin(request: HttpRequest, team: Team | None) -> bool:
    """Tell whether the staff user may change this team's memberships (None: some team)."""
    user = request.user
    if _superuser(request):
        return True
    if team is None:
        return bool(team_ids_with_role(user=user, role=Role.ADMIN))
    return user_has_team_role(user=user, team=team, role=Role.ADMIN)


def _people_field(db_field: Any, request: HttpRequest, kwargs: dict[str, Any]) -> None:
    """Offer (and take) only the accounts the staff user sees (`accounts_in_sight`): any
    account of any team was enlisted in one's own, as its admin, without that person."""
    if db_field.name == "user" and not _superuser(request):
        kwargs["queryset"] = accounts_in_sight(request)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        _people_field(db_field, request, kwargs)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    # `obj` is the team whose page this is.
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_add_permission(request, obj) and _team_admin(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_change_permission(request, obj) and _team_admin(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_delete_permission(request, obj) and _team_admin(request, obj)


@admin.register(Team)
class TeamAdmin(TeamRowsAdmin):
    team_path = "pk"
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Agents address sandboxes as "team/name": whoever renames a team can free its slug
        # for a team of their own and receive its members' submissions. Its admins only.
        if not super().has_change_permission(request, obj):
            return False
        return obj is None or _team_admin(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting a team deletes its sandboxes and their audit trail.
        return _superuser(request)


@admin.register(Membership)
class MembershipAdmin(TeamRowsAdmin):
    list_display = ["team", "user", "role", "created_at"]
    # Offers only the teams of the rows shown: every team's name otherwise.
    list_filter = ["role", ("team", admin.RelatedOnlyFieldListFilter)]
    autocomplete_fields = ["user", "team"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return super().has_add_permission(request) and _team_admin(request, None)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        team = obj.team if obj is not None else None
        return super().has_change_permission(request, obj) and _team_admin(request, team)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        team = obj.team if obj is not None else None
        return super().has_delete_permission(request, obj) and _team_admin(request, team)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # A membership stays in its team and with its user: only the role changes.
        return ["team", "user"] if obj is not None else []

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        _people_field(db_field, request, kwargs)
        if db_field.name == "team" and not _superuser(request):
            kwargs["queryset"] = Team.objects.filter(
                pk__in=team_ids_with_role(user=request.user, role=Role.ADMIN)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        # A bulk delete checks no object: keep to the teams this person administers.
        if not _superuser(request):
            queryset = queryset.filter(
                team_id__in=team_ids_with_role(user=request.user, role=Role.ADMIN)
            )
        super().delete_queryset(request, queryset)


@admin.register(ApiToken)
class ApiTokenAdmin(OwnRowsAdmin):
    # Revoked by their owner in the studio: a staff user's own, a superuser's any (an agent
    # token of another team was revoked by whoever had the teams' permissions).
    list_display = [
        "name", "user", "prefix", "created_at", "last_used_at", "revoked_at", "revoked_reason"
    ]  # fmt: skip
    # The binding to the password is no one's to read: shown, it would be a hash to attack.
    exclude = ["password_mac"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    actions = ["revoke"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Never edited: a token moved to another user would act as them, a revoked one
        # brought back would work again, and the hash must never be set to a known value.
        return [f.name for f in ApiToken._meta.fields if f.name not in self.exclude]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Tokens are issued in the UI, where the raw value is shown once.
        return False

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        """Revoke tokens through the service: their long requests end, their webhooks stop."""
        count = sum(
            api_token_revoke(user=token.user, token_id=token.pk, reason=RevokeReason.ADMIN)
            for token in queryset.select_related("user")
        )
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)

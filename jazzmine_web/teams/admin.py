"""Admin for teams, memberships and API tokens; no side door around team roles or tokens.

A role decides who changes what review means in a team's sandboxes, so the model permission
alone does not let a staff user hand out roles: memberships of a team are changed by its
admins (or a superuser). Tokens are issued by their owner, where the raw value is shown once;
here they are shown, and revoked through the service (which stops their webhooks too).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from . import admin_accounts  # noqa: F401  (registers the people and groups admin)
from .models import ApiToken, Membership, Role, Team
from .selectors import team_ids_with_role, user_has_team_role
from .services import api_token_revoke


def _team_admin(request: HttpRequest, team: Team | None) -> bool:
    """Tell whether the staff user may change this team's memberships (None: some team)."""
    user = request.user
    if getattr(user, "is_superuser", False):
        return True
    if team is None:
        return bool(team_ids_with_role(user=user, role=Role.ADMIN))
    return user_has_team_role(user=user, team=team, role=Role.ADMIN)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]

    # `obj` is the team whose page this is.
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_add_permission(request, obj) and _team_admin(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_change_permission(request, obj) and _team_admin(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_delete_permission(request, obj) and _team_admin(request, obj)


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
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
        return bool(getattr(request.user, "is_superuser", False))


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["team", "user", "role", "created_at"]
    list_filter = ["role", "team"]
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
        if db_field.name == "team" and not getattr(request.user, "is_superuser", False):
            kwargs["queryset"] = Team.objects.filter(
                pk__in=team_ids_with_role(user=request.user, role=Role.ADMIN)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        # A bulk delete checks no object: keep to the teams this person administers.
        if not getattr(request.user, "is_superuser", False):
            queryset = queryset.filter(
                team_id__in=team_ids_with_role(user=request.user, role=Role.ADMIN)
            )
        super().delete_queryset(request, queryset)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    actions = ["revoke"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Never edited: a token moved to another user would act as them, a revoked one
        # brought back would work again, and the hash must never be set to a known value.
        return [f.name for f in ApiToken._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Tokens are issued in the UI, where the raw value is shown once.
        return False

    @admin.action(description="Revoke the selected tokens", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        """Revoke tokens through the service: their long requests end, their webhooks stop."""
        count = sum(
            api_token_revoke(user=token.user, token_id=token.pk)
            for token in queryset.select_related("user")
        )
        self.message_user(request, f"Revoked {count} token(s).", messages.SUCCESS)

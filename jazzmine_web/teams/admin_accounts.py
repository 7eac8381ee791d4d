"""Admin for people and groups: staff who manage accounts cannot make anyone more than staff.

Django's own user admin lets a staff user with the account permissions tick "superuser" on
their own row, give themselves every permission (directly, or through a group they are in),
or set a superuser's password and sign in as them. A superuser passes every team check in
the studio (it may approve any script), so here only a superuser changes what an account
may do, or changes (or deletes) a superuser's account. Nor does a staff user change (or
delete) another staff account: setting its password and signing in as it would hand them its
permissions, a grant in all but name. Staff keep the rest: adding people, names, emails,
passwords and deactivating ordinary accounts of no team or of teams they administer, and
their own name and email.

A staff user sees the accounts of their own teams, accounts in no team (people to add) and
their own: the list, its filters, the people picker of memberships and each account's page
named every account of every team, superusers included, to any team's staff. Nobody sets
their own password here: Django's form for setting another person's asks for no current
one, so a session left open (or stolen) changed the password, locked its owner out, and
minted API tokens with it. The page that asks for the current one, and counts the guesses,
takes its place (`teams:password`).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from .admin_rows import RefusedNotMissing
from .models import Membership, Role
from .selectors import team_ids_with_role

# What decides how far an account reaches; a superuser's to change.
POWERS = ("is_superuser", "is_staff", "groups", "user_permissions")


def _superuser(request: HttpRequest) -> bool:
    return bool(getattr(request.user, "is_superuser", False))


def _beyond_reach(request: HttpRequest, account: Any) -> bool:
    """Tell whether this account is not the staff user's to change (a superuser's then).

    A superuser's or another staff user's account; or a person in a team the staff user does
    not administer: setting their password and signing in as them is their team role (a
    team admin accepts code and sets secrets, a reviewer approves scripts) in all but name,
    which a model permission is not.
    """
    if _superuser(request) or account.pk == request.user.pk:
        return False
    if account.is_superuser or account.is_staff:
        return True
    return not _teams_administered_cover(request.user, account)


def _teams_administered_cover(staff: Any, account: Any) -> bool:
    """Tell whether every team the account is in is one the staff user administers."""
    theirs = set(Membership.objects.filter(user=account).values_list("team_id", flat=True))
    return theirs <= set(team_ids_with_role(user=staff, role=Role.ADMIN))


def accounts_in_sight(request: HttpRequest) -> QuerySet[Any]:
    """Return the accounts a staff user sees: their own, of their teams, or of no team.

    A superuser sees every account. Another team's people, and superusers, are not listed,
    offered or shown: to add such a person to a team, a superuser does it.
    """
    accounts = get_user_model().objects.all()
    if _superuser(request):
        return accounts
    ours = team_ids_with_role(user=request.user)
    return accounts.filter(
        Q(pk=request.user.pk)
        | Q(is_superuser=False) & (Q(memberships__isnull=True) | Q(memberships__team_id__in=ours))
    ).distinct()


class StudioUserAdmin(RefusedNotMissing, UserAdmin):
    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).filter(pk__in=accounts_in_sight(request).values("pk"))

    def user_change_password(
        self, request: HttpRequest, id: str, form_url: str = ""
    ) -> HttpResponse:
        if unquote(id) == str(request.user.pk):
            return HttpResponseRedirect(reverse("teams:password"))
        return super().user_change_password(request, id, form_url)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        return fields if _superuser(request) else [*fields, *POWERS]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The password view asks this too: a superuser's or another staff user's password
        # is a superuser's to set.
        if obj is not None and _beyond_reach(request, obj):
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and _beyond_reach(request, obj):
            return False
        return super().has_delete_permission(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        # A bulk delete asks per object first (`get_deleted_objects`); this holds regardless.
        if not _superuser(request):
            queryset = queryset.filter(is_superuser=False).exclude(
                Q(is_staff=True) & ~Q(pk=request.user.pk)
            )
            queryset = queryset.filter(
                pk__in=[a.pk for a in queryset if not _beyond_reach(request, a)]
            )
        super().delete_queryset(request, queryset)


class StudioGroupAdmin(GroupAdmin):
    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # A group's permissions reach everyone in it, the staff user who edits it included.
        fields = list(super().get_readonly_fields(request, obj))
        return fields if _superuser(request) else [*fields, "permissions"]


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), StudioUserAdmin)
admin.site.unregister(Group)
admin.site.register(Group, StudioGroupAdmin)

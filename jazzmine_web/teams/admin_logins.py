"""Admin for login throttling (django-axes): a superuser's alone.

Its rows are every team's: the failed and successful logins of every account, with their
addresses and browsers, and the locks that stop guessing. Registered by axes itself, they
were any staff user's with the model permissions: a staff user of one team deleted the lock
of another team's reviewer (or a superuser's) and the guessing went on. A lock is not
scoped to a team (a username may be no account at all), so only a superuser lifts one; the
rest wait out the cool-off (`JAZZMINE_LOGIN_COOLOFF_MINUTES`). Axes' own registration is off
(`AXES_ENABLE_ADMIN`).
"""

from __future__ import annotations

from typing import Any

from axes.admin import AccessAttemptAdmin, AccessFailureLogAdmin, AccessLogAdmin
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.http import HttpRequest


class SuperusersOnly:
    """Every permission of the admin is a superuser's, whatever model permissions say."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False  # rows of logins are written by logins

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)


@admin.register(AccessAttempt)
class LoginAttemptAdmin(SuperusersOnly, AccessAttemptAdmin):
    pass


@admin.register(AccessLog)
class LoginLogAdmin(SuperusersOnly, AccessLogAdmin):
    pass


@admin.register(AccessFailureLog)
class LoginFailureLogAdmin(SuperusersOnly, AccessFailureLogAdmin):
    pass

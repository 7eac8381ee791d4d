"""Forms of the account pages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import authenticate
from django.contrib.auth.forms import PasswordChangeForm
from django.http import HttpRequest

from .models import ApiToken
from .throttling import lockout_minutes


class TokenForm(forms.Form):
    """Name a new API token (the name is the person's note of which agent holds it)."""

    name = forms.CharField(
        max_length=ApiToken._meta.get_field("name").max_length, required=False, strip=True
    )


class ThrottledPasswordChangeForm(PasswordChangeForm):
    """Django's form, its current password checked as a login is: counted and locked.

    The current password is what keeps someone holding only a session (a taken cookie, an
    open laptop) from making the account theirs; Django checks it with `check_password`,
    which nothing counts, so guesses went on without end. Here it goes through
    `authenticate`, so a wrong one is a failed login of this username from this address
    (`teams.throttling`) and a locked username is refused even with the right one; and
    nothing about the new password is said until the current one is right.
    """

    error_messages = {
        **PasswordChangeForm.error_messages,
        "password_locked": (
            "Too many wrong passwords for this username from your address: changing the "
            "password is locked%(minutes)s, even with the right one. Try again later."
        ),
    }

    def __init__(self, user: Any, *args: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request
        self.locked = False

    def clean_old_password(self) -> str:
        old = self.cleaned_data["old_password"]
        found = authenticate(self.request, username=self.user.get_username(), password=old)
        if getattr(self.request, "axes_locked_out", False):
            # Said by this page itself: the lockout page is the login form.
            self.request.axes_locked_out = False
            self.locked = True
            minutes = lockout_minutes(self.request)
            raise forms.ValidationError(
                self.error_messages["password_locked"],
                code="password_locked",
                params={"minutes": f" for {minutes} minute(s)" if minutes else ""},
            )
        if found is None or found.pk != self.user.pk:
            raise forms.ValidationError(
                self.error_messages["password_incorrect"], code="password_incorrect"
            )
        return old

    def clean(self) -> dict[str, Any]:
        # The new password is judged only once the current one is known right: one validator
        # compares it with the current password, and would answer guesses without any count.
        if "old_password" not in self.cleaned_data:
            return self.cleaned_data
        return super().clean()

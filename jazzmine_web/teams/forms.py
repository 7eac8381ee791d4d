"""Forms of the account pages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import authenticate
from django.contrib.auth.forms import PasswordChangeForm
from django.http import HttpRequest

from .models import ApiToken
from .services import TOKEN_NAME_TAKEN, api_token_names_live
from .throttling import lockout_minutes


def current_password_check(
    *, request: HttpRequest, user: Any, password: str, incorrect: str, locked: str
) -> None:
    """Check a signed-in person's current password as a login is: counted, and locked.

    Through `authenticate`, so a wrong one is a failed login of this username from this
    address (`teams.throttling`) and a locked username is refused even with the right one.
    Raise the `incorrect` or `locked` message (a ValidationError coded "password_incorrect" or
    "password_locked"); `locked` may hold `%(minutes)s`.
    """
    found = authenticate(request, username=user.get_username(), password=password)
    if getattr(request, "axes_locked_out", False):
        # Said by the page itself: the lockout page is the login form.
        request.axes_locked_out = False  # type: ignore[attr-defined]
        minutes = lockout_minutes(request)
        raise forms.ValidationError(
            locked,
            code="password_locked",
            params={"minutes": f" for {minutes} minute(s)" if minutes else ""},
        )
    if found is None or found.pk != user.pk:
        raise forms.ValidationError(incorrect, code="password_incorrect")


class TokenForm(forms.Form):
    """Name a new API token, and give the current password to have it made.

    A token acts as its owner for as long as it lives, past the session: someone holding only
    a session (a cookie taken, a laptop left open) must not mint one. The password is checked
    as the password page checks it: counted with failed logins, and locked after the limit.
    """

    error_messages = {
        "password_incorrect": ("Your password was entered incorrectly: the token was not created."),
        "password_locked": (
            "Too many wrong passwords for this username from your address: creating a token "
            "is locked%(minutes)s, even with the right password. Try again later."
        ),
    }

    name = forms.CharField(
        max_length=ApiToken._meta.get_field("name").max_length, required=False, strip=True
    )
    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, user: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.request = request
        self.locked = False

    def clean_name(self) -> str:
        # Reviewers tell a person's agents apart by their tokens' names ("agent agent1
        # (demo)"): two live tokens of one name read as one agent.
        name = self.cleaned_data["name"]
        if name and name in api_token_names_live(self.user):
            # Said after "The token was not created: its name" (the page's sentence).
            raise forms.ValidationError(TOKEN_NAME_TAKEN)
        return name

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        try:
            current_password_check(
                request=self.request,
                user=self.user,
                password=password,
                incorrect=self.error_messages["password_incorrect"],
                locked=self.error_messages["password_locked"],
            )
        except forms.ValidationError as error:
            self.locked = error.code == "password_locked"
            raise
        return password


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
        try:
            current_password_check(
                request=self.request,
                user=self.user,
                password=old,
                incorrect=self.error_messages["password_incorrect"],
                locked=self.error_messages["password_locked"],
            )
        except forms.ValidationError as error:
            self.locked = error.code == "password_locked"
            raise
        return old

    def clean(self) -> dict[str, Any]:
        # The new password is judged only once the current one is known right: one validator
        # compares it with the current password, and would answer guesses without any count.
        if "old_password" not in self.cleaned_data:
            return self.cleaned_data
        return super().clean()

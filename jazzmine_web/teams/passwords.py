"""A password validator Django lacks: a new password must not be the current one."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError


class NotTheCurrentPasswordValidator:
    """Refuse a "new" password that is the one the account has now.

    A password is changed because it may have leaked; typing the same one again would end
    every other session (which Django does on any change) while the leaked one still works.
    """

    def validate(self, password: str, user: Any = None) -> None:
        # An account being created has no usable password, so nothing matches it.
        if user is not None and user.pk is not None and user.check_password(password):
            raise ValidationError(
                "The new password is the current one; choose a different password.",
                code="password_unchanged",
            )

    def get_help_text(self) -> str:
        return "Your new password must differ from your current one."

"""Teams own sandboxes; members hold a role; users hold API tokens for agents."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ..studio.hotrows import Rows


class Role(models.TextChoices):
    """What a member may do; each role includes the ones before it."""

    MEMBER = "member", "Member"
    REVIEWER = "reviewer", "Reviewer"
    ADMIN = "admin", "Admin"


# Ranked so that `admin` passes a `reviewer` check and `reviewer` passes a `member` check.
ROLE_RANK = {Role.MEMBER: 0, Role.REVIEWER: 1, Role.ADMIN: 2}


class Team(models.Model):
    """A group of people sharing sandboxes and tools."""

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """One user in one team, with a role."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["team", "user"], name="membership_unique_team_user")
        ]
        ordering = ["team__name", "user__username"]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    def has_role(self, role: str) -> bool:
        """Tell whether this membership's role includes `role`."""
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(role)]


class RevokeReason(models.TextChoices):
    """Why a token stopped: its list says so, as a token stopped by a password change must."""

    OWNER = "owner", "by its owner"
    ADMIN = "admin", "by an administrator"
    PASSWORD = "password", "the password was changed"
    DEACTIVATED = "deactivated", "the account was deactivated"
    # Found by the sweep (`api_tokens_settle`): a password or the server's key written where
    # nothing revoked the token had already ended it.
    UNBOUND = "unbound", "the password or the server's key changed"


class ApiToken(models.Model):
    """A bearer token an agent uses on the JSON API; only its SHA-256 is stored.

    It is bound to the password it was made under (`password_mac`, an HMAC of the user's
    password hash): a token minted from a stolen session stops when the password changes,
    by whatever path the change came, even one that revoked nothing (`teams.auth`).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    # The first characters stay readable so a user can tell their tokens apart.
    prefix = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.CharField(
        max_length=16, choices=RevokeReason.choices, blank=True, default=""
    )
    # Empty never matches: a token made without a binding (by hand, in a shell) opens nothing.
    password_mac = models.CharField(max_length=64, blank=True, default="", editable=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # Reviewers tell a person's agents apart by their tokens' names: held here too,
            # for two requests at once and for a token made from a shell.
            models.UniqueConstraint(
                fields=["user", "name"],
                condition=models.Q(revoked_at__isnull=True),
                name="api_token_live_name_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        """Tell whether the token still opens the API."""
        return self.revoked_at is None


# Read by every permission check and every run a socket streams (`studio.hotrows`).
TEAM = Rows(Team, where=("id",))
USER_MEMBERSHIPS = Rows(Membership, where=("user",))

"""The agents' read API: JSON, authenticated by per-user bearer tokens."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe

from ..teams.auth import api_token_required, json_error
from . import selectors, services
from .models import Sandbox


def _sandbox_or_none(request: HttpRequest, pk: int) -> Sandbox | None:
    return selectors.sandbox_for_user(request.user, pk)


def _not_found(pk: int) -> HttpResponse:
    return json_error("sandbox_not_found", f"No sandbox {pk} in your teams.", status=404)


@require_safe  # GET, and HEAD as HTTP asks of every GET
@api_token_required
def sandbox_list(request: HttpRequest) -> HttpResponse:
    """List the sandboxes of the token owner's teams."""
    rows = selectors.sandboxes_for_user(request.user).order_by("team__slug", "name")
    return JsonResponse(
        {
            "sandboxes": [
                {
                    "id": s.pk,
                    "team": s.team.slug,
                    "name": s.name,
                    "description": s.description,
                    "tools_url": f"/api/v1/sandboxes/{s.pk}/tools/",
                    "prompt_url": f"/api/v1/sandboxes/{s.pk}/prompt/",
                }
                for s in rows
            ]
        }
    )


@require_safe  # GET, and HEAD as HTTP asks of every GET
@api_token_required
def sandbox_tools(request: HttpRequest, pk: int) -> HttpResponse:
    """List the tools of one sandbox with their interface and checksum."""
    sandbox = _sandbox_or_none(request, pk)
    if sandbox is None:
        return _not_found(pk)
    rows = {t.name: t for t in sandbox.tool_rows()}
    registry = services.registry_for_sandbox(sandbox, tools=rows.values())
    return JsonResponse(
        {
            "sandbox": {"id": sandbox.pk, "team": sandbox.team.slug, "name": sandbox.name},
            "checksum": registry.sandbox_checksum(sandbox.name),
            "tools": [
                {
                    **t.tool.to_dict(),
                    "checksum": t.checksum,
                    "is_async": t.is_async,
                    "dependencies": t.dependencies,
                    "secrets": t.secrets,
                    # In effect for review: asked for and accepted by an admin for this code.
                    "always_allow": rows[t.name].is_always_allowed,
                    "always_allow_pending": rows[t.name].always_allow_pending,
                    "tags": rows[t.name].tags,
                }
                for t in registry.tools(sandbox.name)
            ],
        }
    )


@require_safe  # GET, and HEAD as HTTP asks of every GET
@api_token_required
def sandbox_prompt(request: HttpRequest, pk: int) -> HttpResponse:
    """Return the sandbox's tools XML prompt and checksum."""
    sandbox = _sandbox_or_none(request, pk)
    if sandbox is None:
        return _not_found(pk)
    return JsonResponse(selectors.tools_prompt_payload(sandbox))

"""Catalog pages: thin views over the selectors and services; htmx gets the same partials."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from ..studio.http import FORM_REFUSED, form_status
from ..studio.untrusted import id_number
from ..teams.selectors import teams_for_user
from . import selectors, services
from .forms import ImportForm, SandboxForm, SecretValueForm, ToolForm
from .image_truth import tool_image_sandboxes
from .importer import ImportRefused, source_file_from_upload
from .models import Sandbox, Tool
from .panels import TOOL_PANELS
from .services.secrets import tool_secrets_withheld

PAGE_SIZE = 100


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """List the sandboxes of the user's teams, their tools and the XML prompt the LLM reads."""
    sandboxes = selectors.team_sandbox_summaries(request.user)
    # With none, the page says what to do next, which depends on whether there is a team.
    in_team = bool(sandboxes) or teams_for_user(request.user).exists()
    return render(request, "catalog/home.html", {"sandboxes": sandboxes, "in_team": in_team})


@require_GET
def catalog(request: HttpRequest) -> HttpResponse:
    """Search and filter the tools of the user's teams."""
    text = request.GET.get("q", "")
    sandbox_id = id_number(request.GET.get("sandbox"))
    tag = request.GET.get("tag", "")
    tools = selectors.tool_search(user=request.user, text=text, sandbox_id=sandbox_id, tag=tag)
    page = Paginator(tools, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "tools": page.object_list,
        "q": text,
        "sandbox_id": sandbox_id,
        "tag": tag,
        "sandboxes": selectors.sandboxes_for_user(request.user),
        "tags": selectors.tags_for_user(request.user),
    }
    template = "catalog/catalog.html"
    if request.htmx and request.htmx.target == "catalog-results":
        template += "#catalog-results"
    return render(request, template, context)


@require_GET
def tool_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a tool: interface, exact XML, source, versions and the images holding it."""
    tool = get_object_or_404(selectors.tools_for_user(request.user), pk=pk)
    # Unpublished tools have a page too: their XML is what the LLM will read once published.
    registry = services.registry_for_sandbox(tool.sandbox, include_unpublished=True)
    registered = registry.get_tool(tool.sandbox.name, tool.name)
    history = selectors.tool_version_history(tool)
    context = {
        "tool": tool,
        "registered": registered,
        "xml": registered.tool.build_prompt(),
        "history": history,
        "versions": [row.version for row in history],
        "image_sandboxes": tool_image_sandboxes(tool),
        "can_administer": services.actor_is_admin(actor=request.user, team=tool.sandbox.team),
        "secrets_withheld": tool_secrets_withheld(tool),
    }
    panel = TOOL_PANELS.get(tool.kind)
    if panel is not None:  # script tools: the scripttools app's trials and publish gate
        context.update(panel(tool))
    else:
        lint = selectors.python_tool_lint(tool)
        context.update(lint=lint, lint_failed=sum(1 for item in lint if not item.passed))
    return render(request, "catalog/tool_detail.html", context)


@require_GET
def tool_version_diff(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """Show what one version changed against the one before it, or `?against=<number>`."""
    tool = get_object_or_404(selectors.tools_for_user(request.user), pk=pk)
    version = get_object_or_404(tool.versions, number=number)
    against_number = id_number(request.GET.get("against"))
    against = (
        get_object_or_404(tool.versions, number=against_number)
        if against_number is not None
        else None
    )
    context = {
        "tool": tool,
        "version": version,
        "diff": selectors.tool_version_diff(version, against=against),
        "versions": list(selectors.tool_versions(tool)),
    }
    return render(request, "catalog/tool_detail.html#version-diff", context)


@require_POST
def tool_rollback(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """Put a tool back to an earlier version."""
    tool = get_object_or_404(selectors.tools_for_user(request.user), pk=pk)
    version = get_object_or_404(tool.versions, number=number)
    try:
        change = services.tool_rollback(
            tool=tool, version=version, author=request.user, actor=request.user
        )
    except (ValidationError, PermissionDenied) as exc:
        messages.error(request, _message(exc))
        return redirect("catalog:tool", pk=tool.pk)
    if change.new_version is not None:
        messages.success(
            request,
            f"Rolled {tool.name} back to v{number}: now v{change.new_version.number} "
            f"({change.summary()}).",
        )
    else:
        messages.info(request, f"{tool.name} already matches v{number}: no new version.")
    for remark in change.remarks:
        messages.warning(request, remark[:1].upper() + remark[1:] + ".")
    return redirect("catalog:tool", pk=tool.pk)


def _lint_warning(request: HttpRequest, tool: Tool) -> None:
    """Say right after a save when the tool's documented defaults disagree with its code."""
    failed = [item for item in selectors.python_tool_lint(tool) if not item.passed]
    if failed:
        messages.warning(
            request, "Lint: " + "; ".join(f"{i.title}: {i.message}" for i in failed) + "."
        )


def _message(exc: ValidationError | PermissionDenied) -> str:
    return " ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)


@require_POST
def tool_accept(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept a tool's current code (team admins only): its secrets reach it again, and it is
    always allowed if it asks to be."""
    tool = get_object_or_404(selectors.tools_for_user(request.user), pk=pk)
    # The digest of the code the page showed: what changed since is not accepted unseen.
    seen = request.POST.get("digest", "")
    try:
        services.tool_code_accept(tool=tool, actor=request.user, seen_digest=seen)
    except ValidationError as exc:
        messages.error(request, _message(exc))
        return redirect("catalog:tool", pk=tool.pk)
    what = "its secrets reach it" + (", and it is always allowed" if tool.always_allow else "")
    messages.success(request, f"Accepted {tool.name}'s code: {what}.")
    return redirect("catalog:tool", pk=tool.pk)


@require_http_methods(["GET", "POST"])
def tool_create(request: HttpRequest, pk: int) -> HttpResponse:
    """Add a tool to a sandbox."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    admin = services.actor_is_admin(actor=request.user, team=sandbox.team)
    form = ToolForm(request.POST or None, sandbox=sandbox, admin=admin)
    if request.method == "POST" and form.is_valid():
        values = form.tool_values()
        try:
            tool = services.tool_create(
                sandbox=sandbox,
                author=request.user,
                note=form.cleaned_data["note"] or "Created",
                actor=request.user,
                **values,
            )
        except (ValidationError, PermissionDenied) as exc:
            form.add_error(None, _message(exc))
        else:
            messages.success(request, f"Created tool {tool.name}.")
            _lint_warning(request, tool)
            return redirect("catalog:tool", pk=tool.pk)
    context = {"form": form, "sandbox": sandbox, "tool": None}
    return render(request, "catalog/tool_form.html", context, status=form_status(form))


@require_http_methods(["GET", "POST"])
def tool_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Edit a tool; a change of code or dependencies makes a new version."""
    tool = get_object_or_404(selectors.tools_for_user(request.user), pk=pk)
    if tool.is_script:
        return redirect("scripttools:edit", pk=tool.pk)
    initial = {
        f: getattr(tool, f)
        for f in (
            "name",
            "description",
            "parameters",
            "dependencies",
            "secrets",
            "source",
            "kind",
            "always_allow",
        )
    }
    initial["tags"] = ", ".join(tool.tags)
    admin = services.actor_is_admin(actor=request.user, team=tool.sandbox.team)
    form = ToolForm(request.POST or None, sandbox=tool.sandbox, initial=initial, admin=admin)
    if request.method == "POST" and form.is_valid():
        try:
            change = services.tool_update(
                tool=tool,
                author=request.user,
                note=form.cleaned_data["note"],
                actor=request.user,
                **form.tool_values(),
            )
        except (ValidationError, PermissionDenied) as exc:
            form.add_error(None, _message(exc))
        else:
            if change.new_version is not None:
                messages.success(
                    request,
                    f"Saved {tool.name} as v{change.new_version.number} ({change.summary()}).",
                )
            elif change.changed:
                messages.success(request, f"Saved {tool.name} ({change.summary()}).")
            else:
                messages.info(request, "Nothing changed: no new version.")
            _lint_warning(request, tool)
            return redirect("catalog:tool", pk=tool.pk)
    context = {"form": form, "sandbox": tool.sandbox, "tool": tool}
    return render(request, "catalog/tool_form.html", context, status=form_status(form))


@require_POST
def tool_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """Delete a tool (team admins only: its history goes with it)."""
    tool = get_object_or_404(selectors.tools_for_user(request.user), pk=pk)
    sandbox_pk = tool.sandbox_id
    services.tool_delete(tool=tool, actor=request.user)
    messages.success(request, f"Deleted tool {tool.name}.")
    return redirect("catalog:sandbox", pk=sandbox_pk)


def _sandbox_context(request: HttpRequest, sandbox: Sandbox) -> dict:
    rows = {t.name: t for t in sandbox.tool_rows()}
    registry = services.registry_for_sandbox(sandbox, tools=rows.values())
    # Unpublished script tools are listed, and their secrets can be set before their trial.
    everything = services.registry_for_sandbox(
        sandbox, tools=rows.values(), include_unpublished=True
    )
    return {
        "sandbox": sandbox,
        "tools": [(t, rows[t.name]) for t in everything.tools(sandbox.name)],
        "checksum": registry.sandbox_checksum(sandbox.name),
        "dependencies": registry.aggregate_dependencies(sandbox.name),
        "secret_statuses": selectors.sandbox_secret_statuses(sandbox, registry=everything),
        "image": selectors.sandbox_image_status(sandbox, registry=registry),
        "prompt": registry.build_tools_prompt(sandbox.name),
        "can_administer": services.actor_is_admin(actor=request.user, team=sandbox.team),
        **_wheels_context(sandbox),
    }


def _wheels_context(sandbox: Sandbox) -> dict:
    """What the page says of the wheel files an admin accepts with the dependencies."""
    panel = services.sandbox_wheels_panel(sandbox=sandbox)
    return {
        "wheels": panel.shown,
        "built_wheels": panel.shown.files,
        "built_wheels_marked": panel.marked,
        "built_wheels_digest": panel.shown.digest,
        # Files the worker would not run beside secrets, or none known to read.
        "wheels_pending": panel.pending,
        "withheld_reason": panel.withheld,
    }


@require_GET
def sandbox_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Show a sandbox: tools, aggregated needs, secrets, checksum and image status."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    return render(request, "catalog/sandbox_detail.html", _sandbox_context(request, sandbox))


@require_POST
def sandbox_accept_dependencies(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept a sandbox's current dependencies (team admins only): secrets reach its runs again."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    # The list the page showed: a list changed since is not accepted unseen.
    seen = request.POST.getlist("dependency")
    # The digest of the wheel files it listed ("" when it listed none): a form without it
    # is taken as one that showed none, so a build that finished meanwhile is not accepted.
    seen_wheels = request.POST.get("wheels", "")
    try:
        services.sandbox_dependencies_accept(
            sandbox=sandbox, actor=request.user, seen=seen, seen_wheels=seen_wheels
        )
    except ValidationError as exc:
        messages.error(request, _message(exc))
        return redirect("catalog:sandbox", pk=sandbox.pk)
    accepted = ", ".join(sandbox.dependencies) or "none"
    files = sandbox.accepted_wheels
    bound = f" and {len(files)} wheel file(s)" if files else " (no wheel files: build first)"
    messages.success(request, f"Accepted {sandbox.name}'s dependencies: {accepted}{bound}.")
    return redirect("catalog:sandbox", pk=sandbox.pk)


@require_GET
def sandbox_dependencies(request: HttpRequest, pk: int) -> HttpResponse:
    """Render the dependencies region alone (the page asks for it when a build ends)."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    context = {
        "sandbox": sandbox,
        "can_administer": services.actor_is_admin(actor=request.user, team=sandbox.team),
        **_wheels_context(sandbox),
    }
    return render(request, "catalog/sandbox_detail.html#dependencies", context)


@require_GET
def sandbox_image_status(request: HttpRequest, pk: int) -> HttpResponse:
    """Render the image-status region alone."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    return render(
        request, "catalog/sandbox_detail.html#image-status", _sandbox_context(request, sandbox)
    )


@require_POST
def sandbox_build(request: HttpRequest, pk: int) -> HttpResponse:
    """Start building the sandbox's image in the background; the log streams over a websocket."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    services.image_build_start(sandbox=sandbox, user=request.user)
    if request.htmx:
        return render(
            request, "catalog/sandbox_detail.html#image-status", _sandbox_context(request, sandbox)
        )
    return redirect("catalog:sandbox", pk=sandbox.pk)


@require_POST
def sandbox_secret(request: HttpRequest, pk: int) -> HttpResponse:
    """Set or clear one secret's value."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    form = SecretValueForm(request.POST)
    error = None
    if form.is_valid():
        name = form.cleaned_data["name"]
        everything = services.registry_for_sandbox(sandbox, include_unpublished=True)
        statuses = selectors.sandbox_secret_statuses(sandbox, registry=everything)
        needed = {s.name for s in statuses if s.declared}
        stored = {s.name for s in statuses if s.is_set}
        if not services.actor_is_admin(actor=request.user, team=sandbox.team):
            raise PermissionDenied("Only team admins set or clear secret values.")
        if form.cleaned_data["clear"] and name in stored:
            # A value nothing declares any more is cleared too: kept, it went to the next
            # tool that declared its name.
            services.secret_value_clear(sandbox=sandbox, name=name, actor=request.user)
        elif name not in needed:
            error = f"{name!r} is not a secret of this sandbox"
        elif form.cleaned_data["clear"]:
            services.secret_value_clear(sandbox=sandbox, name=name, actor=request.user)
        else:
            try:
                services.secret_value_set(
                    sandbox=sandbox,
                    name=name,
                    value=form.cleaned_data["value"],
                    user=request.user,
                    actor=request.user,
                )
            except ValidationError as exc:
                error = " ".join(exc.messages)
    else:
        error = "Give a secret name and value"
    context = _sandbox_context(request, sandbox)
    context["secret_error"] = error
    if request.htmx:
        return render(
            request,
            "catalog/sandbox_detail.html#secrets",
            context,
            status=FORM_REFUSED if error else 200,
        )
    if error:
        messages.error(request, error)
    return redirect("catalog:sandbox", pk=sandbox.pk)


@require_http_methods(["GET", "POST"])
def sandbox_create(request: HttpRequest) -> HttpResponse:
    """Create a sandbox in one of the user's teams."""
    teams = teams_for_user(request.user)
    if not teams.exists():
        # A form whose Team list is empty could only be refused: say what comes first.
        status = 409 if request.method == "POST" else 200
        return render(request, "catalog/sandbox_form.html", {"no_team": True}, status=status)
    # Admin fields are editable when the user administers one of their teams; the service
    # then checks the team actually chosen.
    admin = any(services.actor_is_admin(actor=request.user, team=t) for t in teams)
    form = SandboxForm(request.POST or None, teams=teams, initial=_sandbox_initial(), admin=admin)
    if request.method == "POST" and form.is_valid():
        try:
            sandbox = services.sandbox_create(
                team=form.cleaned_data["team"], actor=request.user, **form.config_values()
            )
        except (ValidationError, PermissionDenied) as exc:
            form.add_error(None, _message(exc))
        else:
            messages.success(request, f"Created sandbox {sandbox.name}.")
            return redirect("catalog:sandbox", pk=sandbox.pk)
    context = {"form": form, "sandbox": None}
    return render(request, "catalog/sandbox_form.html", context, status=form_status(form))


def _sandbox_initial(sandbox: Sandbox | None = None) -> dict:
    if sandbox is None:
        return {"base_image": settings.JAZZMINE_BASE_IMAGE}
    keys = ("name", "description", *services.SANDBOX_CONFIG_FIELDS, *services.BASH_LIMIT_FIELDS)
    # Its names only: saving the page then drops what an older row held that is none.
    return {**{k: getattr(sandbox, k) for k in keys}, "secrets": sandbox.secret_names}


@require_http_methods(["GET", "POST"])
def sandbox_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Edit a sandbox's profile."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    form = SandboxForm(
        request.POST or None,
        teams=teams_for_user(request.user),
        instance=sandbox,
        initial=_sandbox_initial(sandbox),
        admin=services.actor_is_admin(actor=request.user, team=sandbox.team),
    )
    if request.method == "POST" and form.is_valid():
        try:
            services.sandbox_update(sandbox=sandbox, actor=request.user, **form.config_values())
        except (ValidationError, PermissionDenied) as exc:
            form.add_error(None, _message(exc))
        else:
            messages.success(request, f"Saved sandbox {sandbox.name}.")
            return redirect("catalog:sandbox", pk=sandbox.pk)
    context = {"form": form, "sandbox": sandbox}
    return render(request, "catalog/sandbox_form.html", context, status=form_status(form))


@require_GET
def sandbox_export(request: HttpRequest, pk: int) -> HttpResponse:
    """Download the sandbox as a Python module the core can import."""
    sandbox = get_object_or_404(selectors.sandboxes_for_user(request.user), pk=pk)
    response = HttpResponse(selectors.sandbox_export_module(sandbox), content_type="text/x-python")
    response["Content-Disposition"] = f'attachment; filename="{sandbox.name.replace("-", "_")}.py"'
    return response


@require_http_methods(["GET", "POST"])
def import_tools(request: HttpRequest) -> HttpResponse:
    """Import tools from uploaded `.py` files, parsed and never executed."""
    teams = teams_for_user(request.user)
    form = ImportForm(request.POST or None, teams=teams)
    report = None
    problems: list = []
    status = 200
    if request.method == "POST" and form.is_valid():
        files = [source_file_from_upload(f) for f in request.FILES.getlist("files")]
        try:
            report = services.tools_import(
                team=form.cleaned_data["team"],
                files=files,
                author=request.user,
                sandbox_name=form.cleaned_data["sandbox"] or None,
                actor=request.user,
            )
        except ImportRefused as exc:
            problems = exc.problems
            status = FORM_REFUSED
    elif request.method == "POST":
        status = FORM_REFUSED
    context = {"form": form, "report": report, "problems": problems}
    template = "catalog/import.html"
    if request.htmx:
        template += "#import-result"
    return render(request, template, context, status=status)

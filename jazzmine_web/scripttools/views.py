"""Script tool pages: create/edit, lint and trial panels, publish, zip import/export, /v1/key."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from jazzmine.jsontext import json_shown
from jazzmine.scripttools import ScriptToolError, load_zip

from ..catalog.models import Tool, ToolKind
from ..catalog.selectors import sandboxes_for_user, tools_for_user
from ..catalog.services.rules import actor_is_admin
from ..studio.http import FORM_REFUSED, bearer_token, form_status
from . import selectors, services
from .forms import NEW_SCHEMA, NEW_SCRIPT, ScriptToolForm, ScriptToolUploadForm, trial_form_for
from .models import TrialRun

PANEL = "scripttools/panel.html"


def _script_tool_row(request: HttpRequest, pk: int) -> Tool:
    tool = get_object_or_404(tools_for_user(request.user), pk=pk)
    if tool.kind != ToolKind.SCRIPT:
        raise Http404("Not a script tool")
    return tool


def panel_context(tool: Tool, *, trial: TrialRun | None = None, form: Any = None) -> dict[str, Any]:
    """Return what the script tool regions of the tool page show."""
    script_tool = selectors.script_tool_for(tool)
    lint = selectors.script_tool_lint(tool)
    trials = list(selectors.trials_for_tool(tool)[:10])
    shown = trial or (trials[0] if trials else None)
    return {
        "tool": tool,
        "script_tool": script_tool,
        "lint": lint,
        "lint_failed": sum(1 for item in lint if not item.passed),
        "trial_form": form or (trial_form_for(script_tool) if script_tool else None),
        "trial": shown,
        "trial_stdout": selectors.pretty_output(shown.stdout) if shown else (False, ""),
        "trial_args": json_shown(shown.args) if shown else "",
        "trials": trials,
        "publish": selectors.publish_state(tool),
        # The files a trial of the current code ran beside, for an admin to accept for the
        # next trials (the sandbox page offers only its own image's files). Only a tool with
        # secrets has any to withhold: the others' pages (and their 1 s polls) skip the read.
        "trial_wheels": selectors.trial_wheels_shown(tool) if tool.secrets else None,
    }


def _panel_for(request: HttpRequest, tool: Tool, **kwargs: Any) -> dict[str, Any]:
    """Return the panel's context for a region rendered alone: who may press Accept too."""
    context = panel_context(tool, **kwargs)
    context["can_administer"] = actor_is_admin(actor=request.user, team=tool.sandbox.team)
    return context


@require_http_methods(["GET", "POST"])
def script_tool_create(request: HttpRequest, pk: int) -> HttpResponse:
    """Add a script tool to a sandbox; it starts unpublished."""
    sandbox = get_object_or_404(sandboxes_for_user(request.user), pk=pk)
    initial = {"parameters": NEW_SCHEMA, "source": NEW_SCRIPT, "timeout": 300.0}
    admin = actor_is_admin(actor=request.user, team=sandbox.team)
    form = ScriptToolForm(request.POST or None, sandbox=sandbox, initial=initial, admin=admin)
    if request.method == "POST" and form.is_valid():
        assert form.script_tool is not None
        try:
            tool, _ = services.script_tool_save(
                sandbox=sandbox,
                tool=form.script_tool,
                author=request.user,
                note=form.cleaned_data["note"] or "Created",
                tags=form.cleaned_data["tags"],
                actor=request.user,
            )
        except (ValidationError, PermissionDenied) as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, f"Created script tool {tool.name}: trial-run it to publish.")
            return redirect("catalog:tool", pk=tool.pk)
    context = {"form": form, "sandbox": sandbox, "tool": None}
    return render(request, "scripttools/form.html", context, status=form_status(form))


@require_http_methods(["GET", "POST"])
def script_tool_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Edit a script tool; new code makes a new version and needs a new trial."""
    tool = _script_tool_row(request, pk)
    current = selectors.script_tool_for(tool)
    if current is None:
        raise Http404("This script tool cannot be read")
    form = ScriptToolForm(
        request.POST or None,
        sandbox=tool.sandbox,
        extra=current.extra,
        initial=ScriptToolForm.initial_for(current, tool.tags),
        admin=actor_is_admin(actor=request.user, team=tool.sandbox.team),
    )
    if request.method == "POST" and form.is_valid():
        assert form.script_tool is not None
        try:
            _, change = services.script_tool_save(
                sandbox=tool.sandbox,
                tool=form.script_tool,
                existing=tool,
                author=request.user,
                note=form.cleaned_data["note"],
                tags=form.cleaned_data["tags"],
                actor=request.user,
            )
        except (ValidationError, PermissionDenied) as exc:
            form.add_error(None, exc)
        else:
            if change.new_version is not None:
                messages.success(
                    request,
                    f"Saved {tool.name} as v{change.new_version.number}: "
                    "trial-run the new code to publish it.",
                )
            elif change.changed:
                messages.success(request, f"Saved {tool.name} (code unchanged: no new version).")
            else:
                messages.info(request, "Nothing changed.")
            return redirect("catalog:tool", pk=tool.pk)
    context = {"form": form, "sandbox": tool.sandbox, "tool": tool}
    return render(request, "scripttools/form.html", context, status=form_status(form))


@require_POST
def trial_create(request: HttpRequest, pk: int) -> HttpResponse:
    """Start a trial run with the arguments of the schema form; the result region polls."""
    tool = _script_tool_row(request, pk)
    script_tool = selectors.script_tool_for(tool)
    if script_tool is None:
        raise Http404("This script tool cannot be read")
    form = trial_form_for(script_tool, request.POST)
    if not form.is_valid():
        context = _panel_for(request, tool, form=form)
        return render(request, f"{PANEL}#trial-panel", context, status=FORM_REFUSED)
    trial = services.trial_start(tool=tool, user=request.user, args=form.arguments())
    if request.htmx:
        context = _panel_for(request, tool, trial=trial, form=form)
        return render(request, f"{PANEL}#trial-panel", context)
    return redirect("catalog:tool", pk=tool.pk)


@require_GET
def trial_detail(request: HttpRequest, pk: int, trial_id: str) -> HttpResponse:
    """Render one trial's result region (polled while the trial runs)."""
    tool = _script_tool_row(request, pk)
    trial = get_object_or_404(TrialRun, pk=trial_id, tool=tool)
    context = _panel_for(request, tool, trial=trial)
    if request.htmx and trial.is_finished:
        # The publish state may have changed with this result: refresh it too.
        return render(request, f"{PANEL}#trial-result-final", context)
    return render(request, f"{PANEL}#trial-result", context)


@require_POST
def trial_wheels_accept(request: HttpRequest, pk: int) -> HttpResponse:
    """Accept the wheel files a trial of the tool's current code ran beside (team admins
    only): its next trials get its secrets."""
    tool = _script_tool_row(request, pk)
    try:
        # What the page showed: the files' digest and the code's ("" when a form carries
        # none, which matches nothing): what changed since is not accepted unseen.
        services.trial_wheels_accept(
            tool=tool,
            actor=request.user,
            seen_wheels=request.POST.get("wheels", ""),
            seen_digest=request.POST.get("digest", ""),
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("catalog:tool", pk=tool.pk)
    files = tool.trial_accepted_wheels or []
    messages.success(
        request,
        f"Accepted {len(files)} wheel file(s) for trials of {tool.name}'s current code "
        f"({tool.checksum}): its trials read its secrets beside them.",
    )
    return redirect("catalog:tool", pk=tool.pk)


@require_POST
def tool_publish(request: HttpRequest, pk: int) -> HttpResponse:
    """Publish a script tool whose current code passed a trial (or withdraw it)."""
    tool = _script_tool_row(request, pk)
    publish = request.POST.get("published", "1") == "1"
    error = None
    try:
        services.script_tool_publish(tool=tool, published=publish, actor=request.user)
    except services.PublishRefused as exc:
        error = " ".join(exc.messages)
    if request.htmx:
        context = panel_context(tool)
        context["publish_error"] = error
        # Said only as the answer to the Withdraw itself: a tool never published reads
        # "Not offered to LLMs", and nothing stored tells the two apart.
        context["withdrawn"] = not publish and error is None
        return render(
            request, f"{PANEL}#publish-answer", context, status=FORM_REFUSED if error else 200
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"{tool.name} is {'published' if publish else 'withdrawn'}.")
    return redirect("catalog:tool", pk=tool.pk)


@require_http_methods(["GET", "POST"])
def script_tools_import(request: HttpRequest) -> HttpResponse:
    """Import script tools from an uploaded zip into a sandbox (parsed, never run)."""
    form = ScriptToolUploadForm(
        request.POST or None, request.FILES or None, sandboxes=sandboxes_for_user(request.user)
    )
    report = None
    problems: list[str] = []
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            tools = load_zip(form.cleaned_data["archive"].read())
            report = services.script_tools_import(
                sandbox=form.cleaned_data["sandbox"],
                tools=tools,
                author=request.user,
                origin=form.cleaned_data["archive"].name,
                actor=request.user,
            )
        except ScriptToolError as exc:
            problems = [str(exc)]
        except ValidationError as exc:
            problems = list(exc.messages)
        if problems:
            status = FORM_REFUSED
    elif request.method == "POST":
        status = FORM_REFUSED
    context = {"form": form, "report": report, "problems": problems}
    return render(request, "scripttools/import.html", context, status=status)


@require_GET
def script_tools_export(request: HttpRequest, pk: int) -> HttpResponse:
    """Download the sandbox's script tools as a zip of `<tool_name>/` folders."""
    sandbox = get_object_or_404(sandboxes_for_user(request.user), pk=pk)
    if not selectors.exportable_script_tools(sandbox):
        # An empty zip looks like a broken download: say why there is nothing instead.
        return HttpResponse(
            f"Nothing to export: sandbox {sandbox.name!r} has no script tools.",
            status=404,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(
        services.script_tools_export(sandbox=sandbox), content_type="application/zip"
    )
    filename = f"{sandbox.name}-script-tools.zip"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_not_required
@require_GET
def keychain(request: HttpRequest) -> JsonResponse:
    """Answer `/v1/key?key=NAME` for a sandbox holding a live run's bearer token."""
    token = bearer_token(request.headers.get("Authorization", ""))
    answer = services.keychain_lookup(token=token, key=request.GET.get("key", ""))
    response = JsonResponse(answer.body, status=answer.status)
    response["Cache-Control"] = "no-store"
    return response

"""The admin site refuses a Python tool's code with anything beside its function, naming it.

Only the function is kept and runs in the sandbox: the admin's change page, which saves
through the services as the studio's form does, stored `import os` above `def do_u()` as the
function alone, and the tool's first run failed with NameError.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tool_create
from tests.web.admin.forms import admin_form
from tests.web.helpers import staff_browser

pytestmark = pytest.mark.django_db

INSIDE = "def do_u() -> ToolResponse:\n    import os\n\n    return ToolResponse(success=True, data=os.getcwd())\n"


@pytest.fixture
def browser(team_admin) -> Client:
    """The team admin's browser, staff with the catalog's admin permissions."""
    return staff_browser(team_admin, "catalog")


def test_an_import_above_the_function_is_refused_and_the_code_kept(
    browser, empty_sandbox, team_admin
) -> None:
    tool = tool_create(
        sandbox=empty_sandbox,
        name="do_u",
        description="Say where the tool runs.",
        source=INSIDE,
        actor=team_admin,
    )
    url = f"/admin/catalog/tool/{tool.pk}/change/"
    outside = "import os\n\n" + INSIDE.replace("    import os\n\n", "")
    response = browser.post(url, admin_form(browser, url, source=outside))
    assert response.status_code == 200, response.status_code  # the form again, saying why
    errors = " ".join(response.context["adminform"].form.non_field_errors())
    assert "line 1: `import os` is outside the function do_u and would not be kept" in errors
    assert Tool.objects.get(pk=tool.pk).source == INSIDE

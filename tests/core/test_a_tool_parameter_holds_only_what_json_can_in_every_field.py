"""Every field of a ToolParameter holds only what JSON can: NaN or an infinity in its examples,
options, description, display name, type or required flag is refused when it is made, as in its
default. A parameter is stored in a JSON column, which refuses them: the save failed with a
database error (a 500) after every other check had passed."""

from __future__ import annotations

import math

import pytest

from jazzmine.core.tools import ToolParameter

NON_FINITE = {"nan": math.nan, "infinity": math.inf, "-infinity": -math.inf}
# {case: (the field named in the error, where the number goes)}
PLACES = {
    "examples": ("examples[1]", lambda v: {"examples": [1, v]}),
    "options": ("options[0]", lambda v: {"options": [v]}),
    "nested example": ("examples[0]['a'][0]", lambda v: {"examples": [{"a": [v]}]}),
    "description": ("description", lambda v: {"description": v}),
    "display_name": ("display_name", lambda v: {"display_name": v}),
    "type": ("type", lambda v: {"type": v}),
    "default": ("default", lambda v: {"default": v}),
}


@pytest.mark.parametrize("number", NON_FINITE)
@pytest.mark.parametrize("field", PLACES)
def test_a_non_finite_number_is_refused_naming_the_field(field: str, number: str) -> None:
    where, place = PLACES[field]
    values = {"type": "int", **place(NON_FINITE[number])}
    with pytest.raises(ValueError, match="JSON cannot represent") as caught:
        ToolParameter(name="n", **values)
    assert str(caught.value).startswith(f"ToolParameter 'n' {where} is ")


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_required_flag_is_refused_as_no_boolean(number: str) -> None:
    with pytest.raises(ValueError, match="required must be true or false"):
        ToolParameter(name="n", type="int", required=NON_FINITE[number])


def test_finite_values_in_every_field_still_make_a_parameter() -> None:
    p = ToolParameter(
        "n", "float", description="d", default=1.5, required=True, options=[0.5, 1.5],
        examples=[{"a": [1e300]}], display_name="N",
    )  # fmt: skip
    assert p.to_dict()["examples"] == [{"a": [1e300]}]

"""Every field of a ToolParameter holds only what JSON can: NaN or an infinity in its examples,
options or default is refused when it is made (and in its description, display name, type or
required flag, which hold text or a boolean, as no number). A parameter is stored in a JSON column, which refuses them: the save failed with a
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
@pytest.mark.parametrize(
    "field, said",
    [
        ("required", "required must be true or false"),
        ("type", "type must be a non-empty string"),
        ("description", "description must be a string"),
        ("display_name", "display_name must be a string"),
    ],
)
def test_a_non_finite_number_where_no_number_goes_is_refused_as_such(
    field: str, said: str, number: str
) -> None:
    with pytest.raises(ValueError, match=said):
        ToolParameter(name="n", **{"type": "int", field: NON_FINITE[number]})


def test_finite_values_in_every_field_still_make_a_parameter() -> None:
    p = ToolParameter(
        "n", "float", description="d", default=1.5, required=True, options=[0.5, 1.5],
        examples=[{"a": [1e300]}], display_name="N",
    )  # fmt: skip
    assert p.to_dict()["examples"] == [{"a": [1e300]}]

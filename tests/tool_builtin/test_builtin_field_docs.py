"""`field_docs` gives the tool inputs the descriptions pydantic's attribute docstrings would."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

from tether._field_docs import field_docs
from tether.tool.builtin import BashInput, EditInput, GlobInput, GrepInput, ReadInput, WriteInput

INPUTS = [BashInput, EditInput, GlobInput, GrepInput, ReadInput, WriteInput]


@pytest.mark.parametrize("model", INPUTS, ids=lambda m: m.__name__)
def test_descriptions_are_the_ones_use_attribute_docstrings_gives(model):
    expected = extract_docstrings_from_cls(model, use_inspect=True)  # pydantic's own reader
    assert expected
    got = {name: f.description for name, f in model.model_fields.items()}
    assert got == expected
    properties = model.model_json_schema()["properties"]
    for name, field in model.model_fields.items():
        assert properties[field.alias or name]["description"] == expected[name]


@field_docs
class _Sample(BaseModel):
    model_config = ConfigDict(defer_build=True)

    plain: int = 0
    """First line.

        Indented continuation."""
    explicit: str = Field(default="", description="kept")
    """Not used: the field has a description."""
    undocumented: bool = False


def test_a_field_description_is_kept_and_docstrings_are_cleaned():
    fields = _Sample.model_fields
    assert fields["plain"].description == "First line.\n\nIndented continuation."
    assert fields["explicit"].description == "kept"
    assert fields["undocumented"].description is None
    assert _Sample.model_json_schema()["properties"]["plain"]["description"].startswith("First")


def test_a_model_whose_schema_is_built_is_refused():
    class Built(BaseModel):
        x: int = 0
        """Too late: the schema is built."""

    with pytest.raises(TypeError, match="defer_build"):
        field_docs(Built)


def test_the_storage_records_use_it_too():
    from tether.app.storage import SessionInfo, SessionRecord

    for model in (SessionRecord, SessionInfo):
        schema = model.model_json_schema(mode="serialization")
        assert all(field.description for field in model.model_fields.values()), model
        assert schema["properties"]["user_id"]["description"] == "The user the session belongs to."

"""The OpenAI function-calling schemas: flat scalar parameters, no $ref noise, complete."""
from __future__ import annotations

import json
import re

from tools import TOOLS, openai_schemas

SCALARS = {"string", "integer", "number", "boolean"}


def test_every_schema_is_an_openai_function_with_scalar_parameters() -> None:
    schemas = openai_schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOLS)
    for s in schemas:
        assert set(s) == {"type", "function"} and s["type"] == "function"
        fn = s["function"]
        assert set(fn) == {"name", "description", "parameters"}
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", fn["name"])
        assert len(fn["description"]) > 40 and "\n" not in fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        for name, prop in params["properties"].items():
            assert prop["type"] in SCALARS, (fn["name"], name)
            assert prop["description"], (fn["name"], name)
            assert not {"anyOf", "$ref", "title", "items", "properties"} & set(prop)
        text = json.dumps(s)
        assert "$defs" not in text and "title" not in text


def test_schema_matches_model() -> None:
    params = {s["function"]["name"]: s["function"]["parameters"] for s in openai_schemas()}
    assert params["read_file"]["required"] == ["path"]
    assert params["search"]["properties"]["mode"]["enum"] == ["regex", "symbol"]
    assert params["terminal"]["properties"]["timeout_s"]["type"] == "number"
    assert "default" not in params["read_file"]["properties"]["start_line"]

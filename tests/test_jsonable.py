"""`--json` output: the C encoder walks the data and records go through their to_json (rooms_cli/core/jsonable.py)."""

from __future__ import annotations

import json

from rooms_cli.core.jsonable import dumps, to_jsonable


class Record:
    def __init__(self, n: int):
        self.n = n

    def to_json(self) -> dict:
        return {"n": self.n, "inner": [Inner()]}


class Inner:
    def to_json(self) -> str:
        return "inner"


def test_dumps_writes_what_the_python_walk_wrote_and_goes_into_records_it_returns():
    data = {"a": [Record(1), (2, 3)], 4: {"b": Record(2)}, "ü": None}
    assert json.loads(dumps(data)) == {"a": [{"n": 1, "inner": ["inner"]}, [2, 3]], "4": {"b": {"n": 2, "inner": ["inner"]}},
                                       "ü": None}
    plain = {"a": [1, (2, 3)], 4: {"b": "x"}, "ü": "é"}
    assert dumps(plain) == json.dumps(to_jsonable(plain), ensure_ascii=False)
    assert dumps(plain, indent=2) == json.dumps(to_jsonable(plain), ensure_ascii=False, indent=2)


def test_something_that_is_not_json_is_a_type_error_naming_it():
    import pytest

    with pytest.raises(TypeError, match="object is not JSON serialisable"):
        dumps({"x": object()})

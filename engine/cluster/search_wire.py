"""What a shard's answer looks like on its way to the router: plain tuples.

Ray pickles every argument and return value. A frozen dataclass with slots unpickles
through ``dataclasses``' Python ``__setstate__``, field by field: measured here, ten results
took 367 us to unpickle and 320 us to pickle (with their --explain parts), ten results as
tuples of their fields 6 and 5 us, and building the ten ``Result``s again from the tuples
another 33 us; the router unpickled every shard's answer one after another (a cProfile of
16 shards: ~0.4 ms each). So a shard sends its results and its repositories' answers as
tuples in the dataclasses' field order, and the router builds them again (the query goes
the other way pickled once for every shard: search_shard.pack_request). Pure: no Ray.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any

from engine.types import Result, SearchResponse, SignalRun

PackedResult = tuple[Any, ...]  # a Result's fields, in their declared order
PackedResponse = tuple[Any, ...]  # a SearchResponse's fields, its runs packed too

_RESULT = attrgetter(*(f.name for f in fields(Result)))
_RUN = attrgetter(*(f.name for f in fields(SignalRun)))
_RESPONSE_FIELDS = tuple(f.name for f in fields(SearchResponse))
_RESPONSE = attrgetter(*_RESPONSE_FIELDS)
_RUNS = _RESPONSE_FIELDS.index("runs")


def pack_results(results: Sequence[Result]) -> list[PackedResult]:
    return [_RESULT(r) for r in results]


def unpack_results(packed: Sequence[PackedResult]) -> list[Result]:
    return [Result(*values) for values in packed]


def pack_response(response: SearchResponse) -> PackedResponse:
    values = list(_RESPONSE(response))
    values[_RUNS] = [_RUN(run) for run in response.runs]
    return tuple(values)


def unpack_response(packed: PackedResponse) -> SearchResponse:
    values = list(packed)
    values[_RUNS] = [SignalRun(*run) for run in values[_RUNS]]
    return SearchResponse(*values)

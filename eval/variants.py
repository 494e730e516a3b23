"""Ranking variants named on the command line: ``engine eval --benchmark ... --ranking SPEC``.

A SPEC is comma-separated ``name=value`` settings, each either a field of
``RankingOptions`` (``file_weight=0.3``, ``definition_heads=false``, ``max_per_file=1``) or a
route's ``k`` or signal weight (``question.k=40``, ``question.vector=4``,
``identifier.symbol=0.5``). Every SPEC adds one row to the run, re-ranking the same signal
runs as the ablation rows do, so a knob is measured without a script of one's own.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import get_args

from engine.errors import UsageError
from engine.search.ranking.options import DEFAULT_RANKING, FileScope, RankingOptions
from engine.search.routing import ROUTES, QueryKind, Route
from eval.benchmark_run import Config

_FIELDS = frozenset(f.name for f in dataclasses.fields(RankingOptions))
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def parse_variant(spec: str) -> Config:
    """The ablation row ``spec`` describes; a UsageError names the setting it cannot read."""
    ranking: RankingOptions = DEFAULT_RANKING
    routes: dict[QueryKind, Route] = dict(ROUTES)
    settings = [s.strip() for s in spec.split(",") if s.strip()]
    if not settings:
        raise UsageError("--ranking needs settings, e.g. --ranking file_weight=0.3,question.k=40")
    for setting in settings:
        name, sep, raw = setting.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not name or not raw:
            raise UsageError(f"--ranking {spec!r}: {setting!r} is not NAME=VALUE")
        if "." in name:
            routes = _route_setting(routes, name, raw, spec)
        else:
            value = _field_value(name, raw, spec)
            ranking = replace(ranking, **{name: value})  # type: ignore[arg-type]  # checked
    changed_routes = routes != dict(ROUTES)
    return Config(spec, None, ranking, routes if changed_routes else None)


def _field_value(name: str, raw: str, spec: str) -> object:
    if name not in _FIELDS:
        known = ", ".join(sorted(_FIELDS))
        raise UsageError(f"--ranking {spec!r}: no ranking option {name!r}; known: {known}")
    default = getattr(DEFAULT_RANKING, name)
    if name == "file_scope":
        if raw not in get_args(FileScope):
            raise UsageError(f"--ranking {spec!r}: file_scope is one of {get_args(FileScope)}")
        return raw
    if isinstance(default, bool):
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise UsageError(f"--ranking {spec!r}: {name} is true or false, not {raw!r}")
    if name == "max_per_file" and raw.lower() == "none":
        return None
    number = _number(name, raw, spec)
    if isinstance(default, int) or name == "max_per_file":
        if number != int(number) or number < 1:
            raise UsageError(f"--ranking {spec!r}: {name} is a whole number >= 1")
        return int(number)
    return number


def _number(name: str, raw: str, spec: str) -> float:
    """``raw`` as a finite number >= 0, or a UsageError naming the setting."""
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise UsageError(f"--ranking {spec!r}: {name} is a number, not {raw!r}")
    if number < 0:
        raise UsageError(f"--ranking {spec!r}: {name} cannot be negative")
    return number


def _route_setting(
    routes: Mapping[QueryKind, Route], name: str, raw: str, spec: str
) -> dict[QueryKind, Route]:
    kind, _, key = name.partition(".")
    if kind not in routes:
        raise UsageError(f"--ranking {spec!r}: no route {kind!r}; known: {', '.join(routes)}")
    route = routes[kind]  # type: ignore[index]  # checked just above
    number = _number(name, raw, spec)
    if key == "k":
        if number != int(number):
            raise UsageError(f"--ranking {spec!r}: {name} is a whole number")
        changed = replace(route, k=int(number))
    elif key in route.weights:
        changed = replace(route, weights={**route.weights, key: number})
    else:
        keys = ", ".join(["k", *route.weights])
        raise UsageError(f"--ranking {spec!r}: a route has {keys}, not {key!r}")
    return {**routes, kind: changed}  # type: ignore[dict-item]  # kind is a QueryKind

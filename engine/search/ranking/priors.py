"""Priors by path and kind: what a result's path and chunk kind say before the query is read.

Test files, generated and vendored code rank below implementation code unless the caller
asks for them; documentation, legacy or compatibility shims and module-level code (imports
and constants between definitions) rank by their own multipliers, measured on the
development set (eval/RESULTS.md).
"""

from __future__ import annotations

import re
from typing import Literal

from engine.search.ranking.options import RankingOptions
from engine.types import Result

# A ``test_`` prefix names a test file only where the test runner says so (pytest, Ruby's
# test-unit and minitest): bats-core's lib/bats-core/test_functions.bash is the framework
# itself, abseil's absl/log/internal/test_helpers.cc is support code, not a test.
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs|testing|testdata|fixtures?)/"
    r"|(^|/)test_[^/]*\.(py|rb)$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$|_spec\.rb$"
    r"|(^|/)conftest\.py$"
)
_GENERATED_PATH = re.compile(
    r"_pb2(_grpc)?\.pyi?$|\.pb\.go$|\.pb\.(cc|h)$|\.g\.dart$|(^|/)generated/|\.generated\.[a-z]+$"
)
_VENDORED_PATH = re.compile(r"(^|/)(vendor|third_party|third-party|external)/")


_LEGACY_PATH = re.compile(r"(^|/)(deprecated|legacy|compat|_compat|backports?|v1)(/|\.[a-z]+$)")
_DOCS_LANGUAGES = frozenset({"markdown", "text", "rst"})


PathKind = Literal["implementation", "test", "generated"]


def path_kind(path: str) -> PathKind:
    """What a path holds by its name, as the priors below judge it ("generated" includes
    vendored code); the vector signal embeds in this order (implementation first)."""
    if _GENERATED_PATH.search(path) or _VENDORED_PATH.search(path):
        return "generated"
    if _TEST_PATH.search(path):
        return "test"
    return "implementation"


def path_prior(path: str, options: RankingOptions) -> tuple[float, str]:
    """The multiplier for a result in ``path`` and its reason ("" for none)."""
    if not options.include_generated and (
        _GENERATED_PATH.search(path) or _VENDORED_PATH.search(path)
    ):
        return options.generated_prior, "generated-or-vendored"
    if not options.include_tests and _TEST_PATH.search(path):
        return options.test_prior, "test"
    if _LEGACY_PATH.search(path):
        return options.legacy_prior, "legacy-or-compat"
    return 1.0, ""


def result_prior(result: Result, options: RankingOptions) -> tuple[float, str]:
    """The multiplier for ``result`` by its path, then by its chunk's kind."""
    factor, reason = path_prior(result.path, options)
    if factor != 1.0:
        return factor, reason
    if result.kind == "section" or result.language in _DOCS_LANGUAGES:
        return options.docs_prior, "documentation"
    if result.kind == "module":
        return options.module_prior, "module-level code"
    return 1.0, ""

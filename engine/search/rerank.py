"""What happens to fused results before they are shown: priors, de-duplication, diversity.

- **Priors** scale a result's fused score by what its path says: test files, generated and
  vendored code rank below implementation code unless the caller asks for them.
- **De-duplication**: a result overlapping a better one in the same file (a method inside
  its class's chunk, neighbouring windows) is dropped; identical code in several files is
  shown once, listing the other paths.
- **Diversity**: at most ``max_per_file`` results from one file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.types import Result

_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs|testing|testdata|fixtures?)/"
    r"|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$|_spec\.rb$|(^|/)conftest\.py$"
)
_GENERATED_PATH = re.compile(
    r"_pb2(_grpc)?\.pyi?$|\.pb\.go$|\.pb\.(cc|h)$|\.g\.dart$|(^|/)generated/|\.generated\.[a-z]+$"
)
_VENDORED_PATH = re.compile(r"(^|/)(vendor|third_party|third-party|external)/")


@dataclass(frozen=True, slots=True)
class RankingOptions:
    include_tests: bool = False
    include_generated: bool = False
    test_prior: float = 0.6  # multiplies a test file's fused score
    generated_prior: float = 0.5  # generated or vendored code
    max_per_file: int = 3
    dedupe: bool = True


DEFAULT_RANKING = RankingOptions()


def path_prior(path: str, options: RankingOptions) -> tuple[float, str]:
    """The multiplier for a result in ``path`` and its reason ("" for none)."""
    if not options.include_generated and (
        _GENERATED_PATH.search(path) or _VENDORED_PATH.search(path)
    ):
        return options.generated_prior, "generated-or-vendored"
    if not options.include_tests and _TEST_PATH.search(path):
        return options.test_prior, "test"
    return 1.0, ""


def _content_key(result: Result) -> str:
    return hashlib.blake2b(result.content.encode("utf-8", "replace"), digest_size=12).hexdigest()


def _overlaps(a: Result, b: Result) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def rerank(results: Sequence[Result], options: RankingOptions, limit: int) -> list[Result]:
    """Apply priors, then keep the best of overlapping or identical results, then cap."""
    scored: list[Result] = []
    for r in results:
        factor, reason = path_prior(r.path, options)
        if factor != 1.0:
            r = replace(r, score=round(r.score * factor, 4), prior=factor, prior_reason=reason)
        scored.append(r)
    scored.sort(key=lambda r: -r.score)  # stable: ties keep the fused order
    kept: list[Result] = []
    per_file: dict[str, int] = {}
    by_content: dict[str, int] = {}
    for r in scored:
        key = _content_key(r) if options.dedupe and r.content.strip() else ""
        if options.dedupe:
            if any(_overlaps(r, k) for k in kept):
                continue
            if key in by_content:
                first = kept[by_content[key]]
                kept[by_content[key]] = replace(first, duplicates=(*first.duplicates, r.path))
                continue
        if per_file.get(r.path, 0) >= options.max_per_file:
            continue
        per_file[r.path] = per_file.get(r.path, 0) + 1
        if key:
            by_content[key] = len(kept)
        kept.append(r)
        if len(kept) >= limit:
            break
    return kept

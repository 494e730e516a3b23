"""The ranking stage's options: which features run and how strongly, by name.

Defaults were measured on the semble-dev development set (eval/RESULTS.md). ``FEATURES``
names the switches the evaluation's ablation rows turn off one at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

FileScope = Literal["best", "all"]

MAX_PER_FILE = 3  # the per-file cap when neither the caller nor a route sets one


@dataclass(frozen=True, slots=True)
class RankingOptions:
    include_tests: bool = False
    include_generated: bool = False
    test_prior: float = 0.6  # multiplies a test file's fused score
    generated_prior: float = 0.5  # generated or vendored code
    docs_prior: float = 0.6  # documentation (markdown sections, text windows)
    legacy_prior: float = 0.7  # deprecated, legacy, compat and old-major-version (v1/) code
    module_prior: float = 1.0  # module-level code between definitions (imports, constants)
    # At most this many results of one file, until the files run out; None: by query kind
    # (engine/search/routing.py's Route.max_per_file: 3, or 5 for a long pasted report).
    max_per_file: int | None = None
    fill: bool = True  # when files run out, fill the list with more chunks of shown files
    # The j-th chunk of a file competes with score * repeat_factor**j (1.0: no diversity).
    repeat_factor: float = 1.0
    candidates: int = 50  # fused results the ranking stage sees (each signal is asked as many)
    dedupe: bool = True
    definitions: bool = True  # definition first (engine/search/ranking/definitions.py)
    # ... for a long query, for the chunk holding a type's header only, not its later parts
    # (a name query's labels span the whole type: its later windows are answers too)
    definition_heads: bool = True
    # A long query's mentioned definitions, looked up in the ranking's first this many files
    # (engine/search/ranking/mentions.py; 0: off), each at this share of its file's best score
    mention_files: int = 3
    mention_share: float = 0.5
    # ... and a candidate that defines a mentioned name (by suffix or as a called class's
    # constructor: an exact name is definition first's) is multiplied by 1 + this x strength
    mention_weight: float = 2.0
    path_evidence: bool = (
        True  # query words naming the path (engine/search/ranking/path_evidence.py)
    )
    path_weight: float = 1.0  # the multiplier reaches 1 + this when the path names every word
    # ... and for a question, naming a file's whole name counts as this many more words named
    file_names: bool = True
    file_name_weight: float = 2.0
    file_evidence: bool = True  # several strong chunks in one file (file_evidence.py)
    file_weight: float = 0.2
    file_scope: FileScope = "best"  # which chunks of a file path and file evidence lift

    def without(self, feature: str) -> RankingOptions:
        """These options with one switchable feature (a name in ``FEATURES``) turned off."""
        if feature not in FEATURES:
            raise ValueError(f"unknown ranking feature {feature!r}; known: {', '.join(FEATURES)}")
        if feature == "priors":
            return replace(
                self,
                include_tests=True,
                include_generated=True,
                docs_prior=1.0,
                legacy_prior=1.0,
                module_prior=1.0,
            )
        switches: dict[str, bool] = {feature: False}
        return replace(self, **switches)  # type: ignore[arg-type]  # FEATURES are booleans


# The ranking features that can be switched off one at a time, as the evaluation's ablation
# rows do (each a boolean field above, except "priors": every path prior).
FEATURES: tuple[str, ...] = (
    "definitions",
    "definition_heads",
    "path_evidence",
    "file_names",
    "file_evidence",
    "priors",
    "dedupe",
)

DEFAULT_RANKING = RankingOptions()

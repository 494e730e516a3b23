"""What happens to fused results before they are shown: factors, de-duplication, diversity.

- **Factors** multiply each fused score, in order: the prior of its path and kind
  (``priors``), definition first (``definitions``), then, for each file's best chunk, path
  and file evidence (``path_evidence``, ``file_evidence``). The product is divided by the
  largest one the features can give, so scores stay in [0, 1].
- **De-duplication**: a result overlapping a better one in the same file (a method inside
  its class's chunk, neighbouring windows) is dropped; identical code in several files is
  shown once, listing the other paths.
- **Diversity**: at most ``max_per_file`` results from one file, until the files run out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.search.ranking.definitions import (
    DEFAULT_BOOSTS,
    QueryNames,
    definition_factor,
    query_names,
)
from engine.search.ranking.file_evidence import DECAY, OTHERS, file_bonuses
from engine.search.ranking.mentions import (
    FRAME,
    NO_MENTIONS,
    Mentions,
    mention_strength,
    mentions_of,
)
from engine.search.ranking.options import MAX_PER_FILE, RankingOptions
from engine.search.ranking.path_evidence import path_share
from engine.search.ranking.priors import result_prior
from engine.search.ranking.stems import content_stems
from engine.types import Adjustment, Result


@dataclass(frozen=True, slots=True)
class RankQuery:
    """What the ranking stage reads of a query, worked out once."""

    names: QueryNames
    stems: tuple[str, ...]
    # A long query's code-like names, for the definitions its first files hold (mentions.py).
    mentions: Mentions = NO_MENTIONS
    # A pasted report, not a name or a question: type headers apply to it (options.py).
    long: bool = False

    @classmethod
    def of(cls, text: str, identifier_query: bool, long: bool = False) -> RankQuery:
        mentions = mentions_of(text) if long else NO_MENTIONS
        return cls(query_names(text, identifier_query), content_stems(text), mentions, long)


# Identical code in two files is shown once only if it is code: a lone ``}`` or ``end``
# closing a class is in every file, and merging those would hide all but one of the files.
_WORD = re.compile(r"\w")


def _content_key(result: Result) -> str:
    return hashlib.blake2b(result.content.encode("utf-8", "replace"), digest_size=12).hexdigest()


def _overlaps(a: Result, b: Result) -> bool:
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def _adjusted(
    results: Sequence[Result], options: RankingOptions, query: RankQuery | None
) -> list[Result]:
    """Each result's score times the factors of the path priors and the query features."""
    factors: list[list[Adjustment]] = [[] for _ in results]
    for r, mine in zip(results, factors, strict=True):
        prior, reason = result_prior(r, options)
        if prior != 1.0:
            mine.append(Adjustment("prior", prior, reason))
        if query is None:
            continue
        if options.definitions:
            factor, why = definition_factor(
                r.kind,
                r.name,
                r.qualified_name or r.symbol_name,
                r.path,
                query.names,
                continued=r.continued and options.definition_heads and query.long,
            )
            if factor != 1.0:
                mine.append(Adjustment("definitions", factor, why))
    scores = [r.score * _product(f) for r, f in zip(results, factors, strict=True)]
    if query is not None:
        # Path and file evidence say which *file* answers: they lift each file's best chunk
        # (or, with file_scope "all", every chunk of the file).
        lifted = _best_per_file(results, scores) if options.file_scope == "best" else None
        bonuses = file_bonuses([r.path for r in results], scores, options.file_weight)
        # A question, not a name or a pasted report, names the file it is about whole.
        question = query.names.in_question and not query.long
        name_weight = options.file_name_weight if options.file_names and question else 0.0
        for i, r in enumerate(results):
            if lifted is not None and i not in lifted:
                continue
            if options.path_evidence:
                share = path_share(r.path, query.stems)
                if share > 0:
                    factor = 1.0 + options.path_weight * share
                    factors[i].append(Adjustment("path_evidence", factor, "path names the query"))
                    if name_weight > 0:
                        # Shown apart (--explain); the score takes the one combined factor.
                        named = 1.0 + options.path_weight * path_share(
                            r.path, query.stems, name_weight
                        )
                        why = "its file name" if named > factor else "only its folders"
                        factors[i].append(
                            Adjustment("file_names", named / factor, f"the question names {why}")
                        )
                        factor = named
                    scores[i] *= factor
            if options.file_evidence and bonuses[i] > 0 and scores[i] > 0:
                factor = 1 + bonuses[i] / scores[i]
                factors[i].append(Adjustment("file_evidence", factor, "file hit often"))
                scores[i] += bonuses[i]
        if options.mention_weight > 0 and query.mentions:
            _lift_mentioned(results, scores, factors, options, query.mentions)
    scale = _max_factor(options, query)
    adjusted: list[Result] = []
    for r, f, score in zip(results, factors, scores, strict=True):
        by_prior = next((a for a in f if a.feature == "prior"), None)
        adjusted.append(
            replace(
                r,
                score=round(min(1.0, score / scale), 4),
                prior=by_prior.factor if by_prior else 1.0,
                prior_reason=by_prior.reason if by_prior else "",
                adjustments=tuple(f),
            )
        )
    return adjusted


def _lift_mentioned(
    results: Sequence[Result],
    scores: list[float],
    factors: list[list[Adjustment]],
    options: RankingOptions,
    mentions: Mentions,
) -> None:
    """A chunk that holds a frame's line (in any file), or in the first ``mention_files``
    files defines a name the report mentions (not an exact name: definition first has
    those), is lifted, up to its file's best score: it re-orders a file's chunks, never the
    files. Of a long definition cut into windows, only its best window is lifted by name."""
    order = sorted(range(len(results)), key=lambda i: -scores[i])
    best: dict[str, float] = {}
    for i in order:
        best.setdefault(results[i].path, scores[i])
    first = set(list(best)[: options.mention_files])
    done: set[tuple[str, str]] = set()  # one chunk per definition: a long one's best window
    for i in order:
        r = results[i]
        if r.sources == ("mentions",) or scores[i] <= 0:
            continue  # a chunk the stage added at its match's strength
        lines = [n for n in mentions.frame_lines(r.path) if r.start_line <= n <= r.end_line]
        named = any(a.feature == "definitions" for a in factors[i])
        if lines:
            strength, why = FRAME, f"a frame of the report points into it (line {lines[0]})"
        elif r.path not in first or r.continued or (r.path, r.symbol_name) in done or named:
            continue
        else:
            done.add((r.path, r.symbol_name))
            strength = mention_strength(r.name, r.symbol_name, mentions)
            why = f"the report names {r.name}"
        if strength <= 0:
            continue
        lifted = min(best[r.path], scores[i] * (1.0 + options.mention_weight * strength))
        if lifted > scores[i]:
            factors[i].append(Adjustment("mentions", lifted / scores[i], why))
            scores[i] = lifted


def _best_per_file(results: Sequence[Result], scores: Sequence[float]) -> set[int]:
    best: dict[str, int] = {}
    for i, r in enumerate(results):
        if r.path not in best or scores[i] > scores[best[r.path]]:
            best[r.path] = i
    return set(best.values())


def _product(adjustments: Sequence[Adjustment]) -> float:
    value = 1.0
    for a in adjustments:
        value *= a.factor
    return value


def _max_factor(options: RankingOptions, query: RankQuery | None) -> float:
    """The largest factor the features can give, so that scores stay in [0, 1]."""
    if query is None:
        return 1.0
    scale = 1.0
    if options.definitions:
        b = DEFAULT_BOOSTS
        scale *= b.type_kind * b.qualified * b.file_stem
    if options.path_evidence:
        scale *= 1.0 + options.path_weight
    if options.file_evidence:
        scale *= 1.0 + options.file_weight * sum(DECAY**i for i in range(OTHERS))
    return scale


def _diversified(scored: Sequence[Result], factor: float) -> list[Result]:
    """Re-order best-first results so that the j-th chunk of a file (counting from 0) competes
    with ``score * factor**j``: a second chunk of a file is shown before a new file only
    when it is clearly better (a soft form of one-per-file, like maximal marginal relevance
    with the file as the measure of redundancy). Scores themselves are not changed."""
    seen: dict[str, int] = {}
    keyed: list[tuple[float, int, Result]] = []
    for position, r in enumerate(scored):
        j = seen.get(r.path, 0)
        seen[r.path] = j + 1
        keyed.append((r.score * factor**j, position, r))
    keyed.sort(key=lambda item: (-item[0], item[1]))
    return [r for _, _, r in keyed]


def rerank(
    results: Sequence[Result],
    options: RankingOptions,
    limit: int,
    query: RankQuery | None = None,
) -> list[Result]:
    """Apply priors and the query features, then keep the best of overlapping or identical
    results, then cap per file. Without ``query`` only the priors apply."""
    scored = _adjusted(results, options, query)
    # Exact ties by location: the fused order of tied chunks follows chunk ids, which an
    # update assigns differently from a clean build.
    scored.sort(key=lambda r: (-r.score, r.path, r.start_line, r.end_line))
    if options.repeat_factor != 1.0:
        scored = _diversified(scored, options.repeat_factor)
    kept: list[Result] = []
    per_file: dict[str, int] = {}
    cap = options.max_per_file if options.max_per_file is not None else MAX_PER_FILE
    by_content: dict[str, int] = {}
    held_back: list[Result] = []  # over the per-file cap: shown only if files run out
    for r in scored:
        key = _content_key(r) if options.dedupe and _WORD.search(r.content) else ""
        if options.dedupe:
            if any(_overlaps(r, k) for k in kept):
                continue
            if key in by_content:
                first = kept[by_content[key]]
                kept[by_content[key]] = replace(first, duplicates=(*first.duplicates, r.path))
                continue
        if per_file.get(r.path, 0) >= cap:
            held_back.append(r)
            continue
        per_file[r.path] = per_file.get(r.path, 0) + 1
        if key:
            by_content[key] = len(kept)
        kept.append(r)
        if len(kept) >= limit:
            return kept
    # Fewer files than ``limit`` matched (a small repository, a narrow filter): the list is
    # filled with the best further chunks of the files already shown, after all of them.
    if options.fill:
        for r in held_back:
            if len(kept) >= limit:
                break
            if options.dedupe and _WORD.search(r.content) and _content_key(r) in by_content:
                continue  # its identical twin in another file is already listed
            kept.append(r)
    return kept

"""Rank a symbol table's definitions for a query with the formulas of scoring.py.

Candidates are the definitions with an exact, qualified, stack-frame or prefix name match and
those whose name holds a query part. Parts are expanded rarest first; once ``MAX_CANDIDATES``
are in hand, commoner parts only add weight to the candidates already found, so a query full
of common words stays fast (a definition matching only common parts may then be missed).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from signals.symbol.query_terms import QueryTerms, query_terms, same_file
from signals.symbol.scoring import (
    ALL_PARTS,
    CONTEXT,
    EXACT,
    MIN_PREFIX_CHARS,
    PLAIN_WORD,
    PREFIX,
    idf,
)
from signals.symbol.table import CONTEXT_FIELD, NAME_FIELD, SymbolTable

MAX_CANDIDATES = 3000
PREFIX_TOKENS = 8  # prefix matching for this many leading query tokens: later ones are noise
PREFIX_LIMIT = 200  # completions looked at per prefix


@dataclass(frozen=True, slots=True)
class Ranked:
    definition_id: int
    score: float


class _Weights:
    """idf of the query's parts, and the share of the query's information a token carries."""

    def __init__(self, weight: dict[str, float]) -> None:
        self.weight = weight
        self.information = sum(weight.values())

    def share(self, parts: Iterable[str]) -> float:
        if self.information <= 0:
            return 1.0
        return min(1.0, sum(self.weight.get(p, 0.0) for p in set(parts)) / self.information)


def _name_tiers(table: SymbolTable, terms: QueryTerms, weights: _Weights) -> dict[int, float]:
    """The best exact / qualified / frame / prefix bonus of every definition that has one."""
    tier: dict[int, float] = defaultdict(float)

    def raise_to(i: int, value: float) -> None:
        if value > tier[i]:
            tier[i] = value

    def plain(token: str) -> float:
        return PLAIN_WORD if token in terms.plain else 1.0

    for i, name_lower, _, _ in table.exact(terms.whole):
        share = weights.share(terms.parts_of.get(name_lower, ()))
        raise_to(i, EXACT * share * plain(name_lower))
    lasts = [key.rsplit(".", 1)[-1] for key in terms.dotted]
    lasts += [frame.name for frame in terms.frames]
    for i, name_lower, qual, path in table.exact(lasts):
        # A dotted name that ends the qualified name, or a frame that names the function and
        # its file, points at one definition: as sure as a query can be.
        for key in terms.dotted:
            if qual == key or qual.endswith("." + key):
                raise_to(i, EXACT)
        for frame in terms.frames:
            if frame.name == name_lower and same_file(frame.path, path):
                raise_to(i, EXACT)
    for token in terms.whole[:PREFIX_TOKENS]:
        if len(token) < MIN_PREFIX_CHARS:
            continue
        share = weights.share(terms.parts_of.get(token, ())) * plain(token)
        for i, name_lower in table.prefixed(token, PREFIX_LIMIT):
            raise_to(i, PREFIX * share * (1.0 + len(token) / len(name_lower)) / 2.0)
    return tier


def rank(table: SymbolTable, text: str, limit: int) -> list[Ranked]:
    """The ``limit`` best definitions for ``text``, best first; ties by definition order."""
    if limit < 1 or table.count == 0:
        return []
    terms = query_terms(text)
    name_postings: dict[str, Sequence[int]] = {}
    context_postings: dict[str, Sequence[int]] = {}
    df: dict[tuple[str, str], int] = {}
    for part, field, count, stored in table.postings(terms.parts):
        df[(part, field)] = count
        if field == NAME_FIELD:
            name_postings[part] = stored
        elif field == CONTEXT_FIELD:
            context_postings[part] = stored
    # A part no name has still weighs what its rarity among contexts says.
    weights = _Weights(
        {
            p: idf(table.count, df.get((p, NAME_FIELD)) or df[(p, CONTEXT_FIELD)])
            for p in terms.parts
            if (p, NAME_FIELD) in df or (p, CONTEXT_FIELD) in df
        }
    )

    # matched: idf sum of the query parts in each candidate's name; hits: how many there are.
    matched: dict[int, float] = defaultdict(float)
    hits: dict[int, int] = defaultdict(int)
    for part in sorted(name_postings, key=lambda p: df[(p, NAME_FIELD)]):
        w = weights.weight[part]
        ids: Iterable[int] = name_postings[part]
        if len(matched) >= MAX_CANDIDATES:
            ids = set(matched).intersection(ids)
        for i in ids:
            matched[i] += w
            hits[i] += 1

    tier = _name_tiers(table, terms, weights)
    candidates = set(matched) | set(tier)
    context: dict[int, float] = defaultdict(float)
    for part, posting in context_postings.items():
        w = weights.weight[part]
        for i in candidates.intersection(posting):
            context[i] += w

    information = weights.information
    scores: dict[int, float] = {}
    name_weight, part_counts, prior = table.name_weight, table.part_counts, table.prior
    for i in candidates:
        best = tier.get(i, 0.0)
        coverage = extra = 0.0
        m = matched.get(i, 0.0)
        if information > 0:
            if m > 0:
                own = name_weight[i]
                coverage = (m / information) * (min(1.0, m / own) if own > 0 else 1.0)
                if part_counts[i] >= 2 and hits[i] >= part_counts[i]:
                    best = max(best, ALL_PARTS * m / information)
            extra = CONTEXT * context.get(i, 0.0) / information
        score = (best + coverage + extra) * prior[i]
        if score > 0:
            scores[i] = score
    best_ids = heapq.nsmallest(limit, scores, key=lambda i: (-scores[i], i))
    return [Ranked(i, scores[i]) for i in best_ids]

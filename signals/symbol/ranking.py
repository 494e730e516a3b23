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

from engine.search.ranking.mentions import same_file
from signals.symbol.query_terms import QueryTerms, query_terms
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

    def __init__(self, weight: dict[str, float], parts_of: dict[str, tuple[str, ...]]) -> None:
        self.weight = weight
        self.information = sum(weight.values())
        self._parts_of = parts_of
        self._shares: dict[str, float] = {}

    def share(self, token: str) -> float:
        """The share of a whole query token (lower-cased), from the parts it was written with."""
        found = self._shares.get(token)
        if found is None:
            if self.information <= 0:
                found = 1.0
            else:
                parts = set(self._parts_of.get(token, ()))
                found = min(1.0, sum(self.weight.get(p, 0.0) for p in parts) / self.information)
            self._shares[token] = found
        return found


def _name_tiers(table: SymbolTable, terms: QueryTerms, weights: _Weights) -> dict[int, float]:
    """The best exact / qualified / frame / prefix bonus of every definition that has one."""
    tier: dict[int, float] = {}

    def raise_to(i: int, value: float) -> None:
        if value > tier.get(i, 0.0):
            tier[i] = value

    def plain(token: str) -> float:
        return PLAIN_WORD if token in terms.plain else 1.0

    whole = set(terms.whole)
    # A dotted name that ends the qualified name, or a frame that names the function and its
    # file, points at one definition: as sure as a query can be.
    dotted: dict[str, list[str]] = defaultdict(list)
    for key in terms.dotted:
        dotted[key.rsplit(".", 1)[-1]].append(key)
    frames: dict[str, list[str]] = defaultdict(list)
    for frame in terms.frames:
        frames[frame.name].append(frame.path)
    for i, name_lower, qual, path in table.exact(
        [*whole, *(dotted.keys() - whole), *(frames.keys() - whole - dotted.keys())]
    ):
        if name_lower in whole:
            raise_to(i, EXACT * weights.share(name_lower) * plain(name_lower))
        for key in dotted.get(name_lower, ()):
            if qual == key or qual.endswith("." + key):
                raise_to(i, EXACT)
        for frame_path in frames.get(name_lower, ()):
            if same_file(frame_path, path):
                raise_to(i, EXACT)
    for token in terms.whole[:PREFIX_TOKENS]:
        if len(token) < MIN_PREFIX_CHARS:
            continue
        share = weights.share(token) * plain(token)
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
        },
        terms.parts_of,
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
    candidates = matched.keys() | tier.keys()
    information = weights.information
    inverse = 1.0 / information if information > 0 else 0.0
    context: dict[int, float] = defaultdict(float)
    for part, posting in context_postings.items():
        w = CONTEXT * weights.weight[part] * inverse
        for i in candidates.intersection(posting):
            context[i] += w
    return _best(table, limit, matched, hits, tier, context, inverse)


def _best(
    table: SymbolTable,
    limit: int,
    matched: dict[int, float],
    hits: dict[int, int],
    tier: dict[int, float],
    context: dict[int, float],
    inverse: float,
) -> list[Ranked]:
    """Score every candidate (see scoring.py) and keep the ``limit`` best."""
    name_weight, part_counts, prior = table.name_weight, table.part_counts, table.prior
    tier_of, context_of = tier.get, context.get
    scores: dict[int, float] = {}
    for i, m in matched.items():
        own = name_weight[i]
        explained = m * inverse
        best = tier_of(i, 0.0)
        coverage = explained * (m / own if 0.0 < m < own else 1.0)
        if part_counts[i] >= 2 and hits[i] >= part_counts[i] and ALL_PARTS * explained > best:
            best = ALL_PARTS * explained
        scores[i] = (best + coverage + context_of(i, 0.0)) * prior[i]
    for i, best in tier.items():
        if i not in matched:
            scores[i] = (best + context_of(i, 0.0)) * prior[i]
    # nlargest is stable: walking ids in order breaks ties by definition order.
    best_ids = heapq.nlargest(limit, sorted(scores), key=scores.__getitem__)
    return [Ranked(i, scores[i]) for i in best_ids if scores[i] > 0]

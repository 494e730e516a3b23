"""The symbol signal's scoring formulas and weights, shared by the table writer and ranking.

A definition's score for a query is ``(tier + coverage + context) * prior``:

- ``idf(p) = ln(1 + N / df(p))``: N definitions, df(p) of them have the part p in their name
  (for a part no name has, the definitions whose context has it). Rarer parts weigh more.
- The query's *information* ``I_Q`` is the idf sum of its distinct parts that some definition
  has; a query token's *share* is the idf sum of its parts over ``I_Q`` (at most 1). In a long
  query (a stack trace, a bug report) a common word's share is small, so a match on it counts
  little; a multi-part identifier's share is large.
- ``tier``: the best of ``EXACT * share`` (a query token equals the name, case-insensitive),
  ``ALL_PARTS * matched share`` (every part of a multi-part name is in the query, in any
  order or case), ``PREFIX * share * (1 + len(token) / len(name)) / 2`` (the name starts with
  the token; shorter completions first), else 0. A dotted name that ends the qualified name
  (``Greeter.greet``) or a stack-trace frame whose function and file match gives ``EXACT``
  whatever its share. In a query that also holds code-like tokens, the exact and prefix
  bonuses of its plain words are multiplied by ``PLAIN_WORD``.
- ``coverage = (m / I_Q) * (m / I_d)`` with m the idf sum of the query parts in the name and
  ``I_d`` the name's own idf sum: the fraction of the query explained times the fraction of
  the name explained, in [0, 1].
- ``context = CONTEXT * (idf sum of query parts in the enclosing names and path) / I_Q``.
- ``prior = kind weight * (1 + POPULARITY * ln(1 + refs) / ln(1 + max refs))``: a small push
  for functions and types over variables, and for symbols referenced often.

With the prior in [0.9, 1.05], a one-identifier query (share 1) ranks every exact match
(>= 8.1) above every all-parts match (5.85 .. 6.83), those above every prefix match
(1.58 .. 5.25), and those above every match on some of the name's parts (<= 1.58).
"""

from __future__ import annotations

import math

EXACT = 8.0
ALL_PARTS = 5.5
PREFIX = 3.5
CONTEXT = 0.5
PLAIN_WORD = 0.5  # name bonus for a plain word in a query that also holds code-like tokens
POPULARITY = 0.05
MIN_PREFIX_CHARS = 3

# Definitions that name a value (a variable, an attribute, a constant) are many and rarely
# what a query is after; a module definition stands for a whole file.
KIND_WEIGHTS: dict[str, float] = {"term": 0.9, "module": 0.9, "namespace": 0.9, "meta": 0.9}


def idf(count: int, df: int) -> float:
    return math.log(1.0 + count / df) if df > 0 else 0.0


def prior(kind: str, references: int, max_references: int) -> float:
    popularity = 0.0
    if references > 0 and max_references > 0:
        popularity = math.log1p(references) / math.log1p(max_references)
    return KIND_WEIGHTS.get(kind, 1.0) * (1.0 + POPULARITY * popularity)

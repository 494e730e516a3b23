"""Search: one query through every signal in parallel, fused, re-ranked, packed.

- ``searcher``: the one ranking path (signals in parallel, fuse, hits to chunks).
- ``routing``: what kind of query this is, and the fusion weights for that kind.
- ``fusion``: reciprocal rank fusion of named, ranked hit lists.
- ``ranking/``: the ranking stage after fusion (definition first, path and file evidence,
  priors, de-duplication, diversity), one module per idea.
- ``confidence``: the ``lowConfidence`` flag.
- ``federation``: several repositories' answers merged into one ranking.
- ``budget``: results packed into a token budget without cutting code mid-line.
"""

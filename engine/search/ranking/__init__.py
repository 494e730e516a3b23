"""The ranking stage after fusion: what code search knows, one small module per idea, each
switchable (``options.FEATURES``) and measured on the semble-dev set (eval/RESULTS.md).

- ``rerank``: the stage itself: factors applied in order, then de-duplication and diversity.
- ``options``: ``RankingOptions``, the switches and weights, with measured defaults.
- ``definitions``: definition first, when the query names a symbol.
- ``path_evidence``: query words that name the file or its folders; in a question, more when
  they name the file's whole name (the ``file_names`` switch).
- ``file_evidence``: a file hit several times lifts its best chunk.
- ``priors``: tests, generated, vendored, documentation and legacy code, by path and kind.
- ``stems``: query and path words compared by Snowball stem.
"""

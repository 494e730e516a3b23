"""Context for agents: the search's best code plus the definitions it uses, in one budget.

- ``assembly``: the entry point (``context_for``) and the budget split.
- ``used_names``: the names a chunk of code uses, and how.
- ``expansion``: which definitions the primary chunks use, ranked for the expansion share.
- ``related_tests``: the tests that exercise the primary code, found through references.
- ``markdown``: the context rendered as Markdown for a model to read.
"""

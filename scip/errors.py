"""The errors the scip package raises on purpose.

    ScipError          an index file cannot be read (missing, empty, truncated, not SCIP)
    ├── SymbolError    a symbol string does not follow the SCIP grammar, or cannot be written
    └── RangeError     a range is not 3 or 4 non-negative ints with its end at or after its start

``SymbolError`` and ``RangeError`` are also ``ValueError``s, because they describe a bad value
rather than a bad file. An indexer that fails is not an exception: ``scip.indexers`` returns an
outcome that says why.
"""

from __future__ import annotations


class ScipError(Exception):
    """Base of every scip error. ``str(err)`` names the file or value and what is wrong."""


class SymbolError(ScipError, ValueError):
    pass


class RangeError(ScipError, ValueError):
    pass

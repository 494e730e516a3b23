"""signals: the search backends (lexical, vector, symbol), each behind engine.signal's protocols."""

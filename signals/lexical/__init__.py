"""The lexical signal: BM25 over code-aware terms in a Tantivy index."""

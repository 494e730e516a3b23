"""engine: the core of the code search engine (vocabulary, chunking, storage, search)."""

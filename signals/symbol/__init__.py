"""The symbol signal: definitions from SCIP indexes (real indexers or the engine's own), by name."""

"""scip: the SCIP code-intelligence protocol (schema, reader, symbol grammar, emitter).

Depends only on protobuf and the standard library.
"""

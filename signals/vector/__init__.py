"""The vector signal: chunks embedded with a sentence-transformers model (run as ONNX), FAISS.

The registry entry is ``signals.vector.plugin.PLUGIN``.
"""

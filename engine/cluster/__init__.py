"""The engine on a Ray cluster: indexing many repositories and searching them across nodes.

Optional (`pip install 'engine[cluster]'`): only this package imports Ray, and nothing of the
local path (every other package of engine, the CLI's local commands, local federation)
imports this package; tests/cli/test_no_ray_locally.py guards it. It sits above every other
stage of engine and, like them, never imports `signals`, `cli` or `eval`: whoever starts a
cluster job hands in the signal plugins and the embedder.
"""

import os

# Ray reports usage statistics to its authors by default when it starts a cluster; a
# local-first engine starts none that does (the README tells `ray start` users the same flag).
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

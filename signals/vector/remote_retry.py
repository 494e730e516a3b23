"""When a remote embedder retries a request, and how long it waits first.

A 429 waits what the server's ``Retry-After`` says (seconds or an HTTP date), capped; a 5xx,
a timeout or a dropped connection waits an exponential backoff with jitter (half fixed, half
random, so that parallel indexers do not retry in step); any other 4xx is the caller's
mistake and is not retried. After ``max_attempts`` the caller raises a clear error. ``sleep``
and ``jitter`` are injectable so that tests neither wait nor depend on chance.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 6  # requests in all, the first one included
    base_delay_s: float = 1.0  # the first backoff's upper bound; doubles after each failure
    max_delay_s: float = 60.0
    max_retry_after_s: float = 300.0  # a Retry-After longer than this is cut to it
    sleep: Callable[[float], None] = field(default=time.sleep)
    jitter: Callable[[], float] = field(default=random.random)  # uniform in [0, 1)

    def delay_s(self, failures: int, retry_after_s: float | None = None) -> float:
        """The wait before the next attempt, after ``failures`` failed ones (1 or more)."""
        if retry_after_s is not None:
            return max(0.0, min(retry_after_s, self.max_retry_after_s))
        bound = min(self.max_delay_s, self.base_delay_s * 2.0 ** (failures - 1))
        return float(bound * (0.5 + 0.5 * self.jitter()))


# At query time a person or an agent is waiting: two quick attempts, then the vector signal
# is left out of that answer (the other signals still answer).
QUERY_POLICY = RetryPolicy(
    max_attempts=2, base_delay_s=0.25, max_delay_s=1.0, max_retry_after_s=2.0
)


def retry_after_s(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())

"""The address-space limit of a child process: the runner's workers and the port's process."""

from __future__ import annotations


def address_space(limit_mb: int) -> tuple[int, int] | None:
    """The (soft, hard) RLIMIT_AS that holds a process to `limit_mb` MiB, or None where it
    already is (a limit is only ever lowered) or the platform has none (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = limit_mb * 2**20 if hard == resource.RLIM_INFINITY else min(limit_mb * 2**20, hard)
    if soft != resource.RLIM_INFINITY and soft <= want:
        return None
    return want, hard

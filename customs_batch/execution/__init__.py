"""Execution: apply a plan — scheduler, journal writes, retries under the rate limit, progress."""

"""Argument checks shared by the sync and async APIs: wrong types raise ``TypeError`` (Python's
job), before anything is sent. Values the core checks (a TTL's range, a lock name's form, an
empty key) are left to it: its ``InvalidArgument`` arrives as ``ValueError``, also before
anything is sent. What stays here are values only Python has: ints too big for 64 bits, NaN
or -1 timeouts in ``threading.Lock`` style, and the shape of arguments."""

import math
import operator
import os
from typing import List, Optional, Sequence, Union

BytesLike = Union[str, bytes, bytearray, memoryview]

_I64 = 1 << 63


def to_bytes(value: object, what: str, allow_empty: bool = False) -> bytes:
    """``str`` (encoded as UTF-8) or a bytes-like object, as ``bytes``."""
    if isinstance(value, str):
        b = value.encode("utf-8")
    elif isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
    else:
        raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")
    if not b and not allow_empty:
        raise ValueError(f"{what} must not be empty")
    return b


def ttl(value: object) -> int:
    """A whole number of seconds (``bool`` and ``float`` are refused); the core checks its
    range."""
    if isinstance(value, bool) or not _is_int(value):
        raise TypeError(f"ttl must be an int number of seconds, not {type(value).__name__}")
    n = operator.index(value)  # type: ignore[arg-type]
    if not -_I64 <= n < _I64:
        # Python's ints are unbounded; the core's TTL is 64 bits (and at most etcd's limit).
        raise ValueError(f"ttl must be a positive number of seconds within etcd's limit, got {n}")
    return n


def seconds(value: object, what: str) -> float:
    """A positive, finite number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds, not {type(value).__name__}")
    f = float(value)
    if not (f > 0) or math.isinf(f):
        raise ValueError(f"{what} must be a positive, finite number of seconds, got {value!r}")
    return f


def acquire_timeout(blocking: object, timeout: object) -> Optional[float]:
    """``threading.Lock.acquire`` arguments → None (wait forever) or seconds (0 = try once)."""
    if not isinstance(blocking, bool):
        raise TypeError(f"blocking must be a bool, not {type(blocking).__name__}")
    if timeout is None:
        return None if blocking else 0.0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
    t = float(timeout)
    if math.isnan(t):
        raise ValueError("timeout must not be NaN")
    if t == -1:
        return None if blocking else 0.0
    if not blocking:
        raise ValueError("can't specify a timeout for a non-blocking call")
    if t < 0:
        raise ValueError(f"timeout must be non-negative (or -1 / None to wait forever), got {timeout!r}")
    return None if math.isinf(t) else t


def endpoints(value: object) -> List[str]:
    """A comma-separated ``str`` or a sequence of ``str`` URLs."""
    if isinstance(value, str):
        eps = [e.strip() for e in value.split(",")]
    elif isinstance(value, (list, tuple)):
        for e in value:
            if not isinstance(e, str):
                raise TypeError(f"endpoints must be str URLs, not {type(e).__name__}")
        eps = [e.strip() for e in value]
    else:
        raise TypeError(f"endpoints must be a str or a list of str, not {type(value).__name__}")
    eps = [e for e in eps if e]
    if not eps:
        raise ValueError("no endpoints given")
    return eps


def credentials(user: object, password: object) -> Sequence[Optional[str]]:
    for v, what in ((user, "user"), (password, "password")):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{what} must be a str or None, not {type(v).__name__}")
    if (user is None) != (password is None):
        raise ValueError("give both user and password, or neither")
    return user, password  # type: ignore[return-value]


def path(value: object, what: str) -> Optional[str]:
    """None, or a file path given as ``str`` or ``os.PathLike`` (``bytes`` paths are refused),
    as ``str``. The file itself is read when the client connects."""
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str or os.PathLike path or None, not {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    return value


def server_name(value: object) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"server_name must be a str or None, not {type(value).__name__}")
    if not value:
        raise ValueError("server_name must not be empty")
    return value


def start_revision(value: object) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not _is_int(value):
        raise TypeError(f"start_revision must be an int or None, not {type(value).__name__}")
    n = operator.index(value)  # type: ignore[arg-type]
    if n <= 0:
        raise ValueError(f"start_revision must be positive, got {n}")
    return n


def flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be a bool, not {type(value).__name__}")
    return value


def callback(value: object) -> None:
    if not callable(value):
        raise TypeError(f"callback must be callable, not {type(value).__name__}")


def _is_int(value: object) -> bool:
    try:
        operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True

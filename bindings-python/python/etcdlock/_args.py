"""Argument checks shared by the sync and async APIs: wrong types raise ``TypeError`` (Python's
job), before anything is sent. Values the core checks (a TTL's range, a lock name's form, an
empty key or server name, a start revision, a certificate file) are left to it: its
``InvalidArgument`` arrives as ``ValueError``, also before anything is sent. What stays here
are values only Python has: ints too big for 64 bits, NaN or -1 timeouts in
``threading.Lock`` style, and the shape of arguments."""

import math
import operator
import os
from typing import List, Optional, Sequence, Union

BytesLike = Union[str, bytes, bytearray, memoryview]

_I64 = 1 << 63


def to_bytes(value: object, what: str) -> bytes:
    """``str`` (encoded as UTF-8) or a bytes-like object, as ``bytes``."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def ttl(value: object) -> int:
    """A whole number of seconds (``bool`` and ``float`` are refused); the core checks its
    range."""
    return _int64(value, "ttl", "an int number of seconds")


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
    as ``str``. The core reads the file when the client connects."""
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str or os.PathLike path or None, not {type(value).__name__}")
    return value


def server_name(value: object) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"server_name must be a str or None, not {type(value).__name__}")
    return value


def client_name(value: object) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"name must be a str or None, not {type(value).__name__}")
    return value


def start_revision(value: object) -> Optional[int]:
    return None if value is None else _int64(value, "start_revision", "an int or None")


def flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be a bool, not {type(value).__name__}")
    return value


def callback(value: object) -> None:
    if not callable(value):
        raise TypeError(f"callback must be callable, not {type(value).__name__}")


def _int64(value: object, what: str, expected: str) -> int:
    """An int (``bool`` refused) that fits the core's 64 bits; its range is the core's to check."""
    try:
        if isinstance(value, bool):
            raise TypeError
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what} must be {expected}, not {type(value).__name__}") from None
    if not -_I64 <= n < _I64:
        # Python's ints are unbounded; the core's are 64 bits.
        raise ValueError(f"{what} is out of range: {n}")
    return n


#: The most permits a semaphore may have (the core's ``MAX_PERMITS``).
MAX_PERMITS = 1024


def permits(value: object) -> int:
    """A semaphore's permit count: an int from 1 to ``MAX_PERMITS``."""
    n = _int64(value, "permits", "an int")
    if not 1 <= n <= MAX_PERMITS:
        raise ValueError(f"permits must be 1 to {MAX_PERMITS}, got {n}")
    return n

"""A fence: the lock's name, the acquisition's fencing token and the etcd cluster's ID, in the
string form every etcdlock binding and the command line (ETCDLOCK_FENCE) share."""

import re
from typing import NamedTuple, Union

PREFIX = "etcdlock-fence.v1."


class Fence(NamedTuple):
    """An acquisition, as a database or another service checks it. ``str(fence)`` is its stable
    string form; ``Fence.parse(s)`` reads it back."""

    kind: str
    """``"q"``: a key of a lock's queue (a mutex, a write lock, a leadership, a task's claim);
    ``"k"``: a single key (a pool's slot)."""
    name: bytes
    token: int
    cluster: int

    def __str__(self) -> str:
        return f"{PREFIX}{self.kind}.{self.cluster:x}.{self.token}.{self.name.hex()}"

    @property
    def resource(self) -> str:
        """The default resource a database's mark is kept for: the lock's name."""
        return self.name.decode("utf-8", "replace")

    @classmethod
    def parse(cls, s: Union[str, "Fence"]) -> "Fence":
        """Reads a fence's string form (a Fence is returned as it is); ``ValueError`` if ``s``
        is none."""
        if isinstance(s, Fence):
            return s
        if not isinstance(s, str):
            raise TypeError(f"a fence is a str or an etcdlock Fence, not {type(s).__name__}")
        bad = ValueError(f"not an etcdlock fence: {s[:80]!r}")
        if not s.startswith(PREFIX):
            raise bad
        parts = s[len(PREFIX):].split(".", 3)
        if len(parts) != 4 or parts[0] not in ("q", "k"):
            raise bad
        # The digits only, as every binding's parser reads them (int() and bytes.fromhex() alone
        # would also take a sign, "_", spaces, and numbers beyond 64 bits): the cluster's ID in
        # 1 to 16 hex digits, the token in canonical decimal below 2**63, the name in hex pairs.
        if not (_CLUSTER.fullmatch(parts[1]) and _TOKEN.fullmatch(parts[2]) and _NAME.fullmatch(parts[3])):
            raise bad
        token = int(parts[2])
        if token >= 2**63:
            raise bad
        return cls(parts[0], bytes.fromhex(parts[3]), token, int(parts[1], 16))


_CLUSTER = re.compile(r"[0-9a-fA-F]{1,16}")
_TOKEN = re.compile(r"[1-9][0-9]{0,18}")
_NAME = re.compile(r"(?:[0-9a-fA-F]{2})+")

"""The hashes megalint names and checks its cache entries with: SHA-256 and BLAKE2b.

`hashlib` loads OpenSSL's library when first imported (about 3 ms, a twentieth of a short run's
start-up and a fifth of a replayed one) to offer hashes megalint does not use. CPython builds
both of these in (`_sha2`, `_sha256` before 3.12, `_blake2`), with the same digests: they are
taken from there, and from `hashlib` only where an interpreter was built without them. CPython's
SHA-256 is slower than OpenSSL's (2.5 against 0.5 ms a megabyte): what checks a large entry uses
BLAKE2b (0.8 ms).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not from `typing`: a replayed run imports this module and little else
if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:
        from _sha2 import sha256  # CPython 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # CPython 3.11 and before
        except ImportError:
            from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b

__all__ = ["blake2b", "sha256"]

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# Generated inputs are the same on every run, so that a CI result can be reproduced exactly.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("megalint", derandomize=True, print_blob=True)
_hypothesis_settings.load_profile("megalint")

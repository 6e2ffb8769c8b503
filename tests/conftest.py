import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# The tests check what a run finds, not what an earlier run left in a cache of results (those of
# the cache itself turn it back on).
os.environ["MEGALINT_NO_CACHE"] = "1"

# Generated inputs are the same on every run, so that a CI result can be reproduced exactly.
# hypothesis comes with the test extra; without it the property tests skip themselves.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:
    pass
else:
    _hypothesis_settings.register_profile("megalint", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("megalint")

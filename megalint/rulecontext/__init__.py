"""What rules read: the plain-dict context of each target, and the Locator into the script.

A target is one launch on one path through the script (`launch.py`, `locator.py`), or the
script as a whole for the rules over its shell findings (`script.py`). A value that is unknown
is left out of a context and its reason recorded under `unknown`, so that a rule needing it is
undecided.
"""

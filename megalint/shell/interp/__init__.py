"""The shell interpreter: what a script would set and run, without running anything.

- state.py: variables, one path's `State`, the frame being read, the limits
- pieces.py: what expanding a word yields before it is cut into fields
"""

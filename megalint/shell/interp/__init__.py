"""The shell interpreter: what a script would set and run, without running anything.

- state.py: variables, one path's `State`, the frame being read, the limits
- pieces.py: what expanding a word yields before it is cut into fields
- algebra.py: paths collapsed, merged past MAX_STATES, a child shell's effects, forgetting
- patterns.py: glob matching (`case`, `[[ == ]]`, `${X#p}`, `${X/a/b}`)
- syntax.py: questions about the tree that need no state
"""

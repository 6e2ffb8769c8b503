"""The folder that the paths of a CI report (github, sarif, gitlab) are relative to.

A code host places an annotation or a code-scanning alert by the file's path from the root of the
repository, whatever folder megalint ran in (the Action's `working-directory`, a `cd` in a CI
job). That root is the CI's checkout folder when the CI names it (`GITHUB_WORKSPACE` on GitHub,
`CI_PROJECT_DIR` on GitLab), else the nearest folder above the working folder that holds `.git`
(a folder, or a file in a worktree or submodule), else the working folder itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

CHECKOUT_VARIABLES = ("GITHUB_WORKSPACE", "CI_PROJECT_DIR")


def repository_root(environ: Mapping[str, str], cwd: str) -> str:
    for name in CHECKOUT_VARIABLES:
        value = environ.get(name, "")
        if value:
            return os.path.normpath(os.path.join(cwd, value))
    folder = os.path.abspath(cwd)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.path.abspath(cwd)
        folder = parent

"""One error hierarchy: every exception megalint defines reports a problem through MegalintError,
or says that it only carries control flow and never leaves the code that raises it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import megalint
from megalint.errors import ExitCode, MegalintError


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(megalint.__path__, "megalint."):
        if info.name == "megalint.__main__":  # runs the command when imported
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_exception_reports_a_problem_or_stays_where_it_is_raised():
    classes = _exception_classes()
    assert "megalint.errors.RuleFileError" in classes
    strays = [
        name
        for name, cls in classes.items()
        if not issubclass(cls, MegalintError) and "never leaves" not in " ".join((cls.__doc__ or "").split())
    ]
    assert not strays, f"derive these from megalint.errors.MegalintError, or document them as control flow: {strays}"


def test_the_exit_statuses_are_those_the_help_documents():
    assert [(c.name, int(c)) for c in ExitCode] == [
        ("CLEAN", 0),
        ("FINDINGS", 1),
        ("USAGE", 2),
        ("INTERNAL", 3),
        ("NO_FILES", 4),
        ("INTERRUPTED", 130),
    ]

"""bench/startup.py reads the interpreter a console script runs, and whether the script imports
`re` before megalint starts (what pip before 25.2 writes)."""

from __future__ import annotations

import os
import stat

from bench import startup

OLD_PIP = "#!/venv/bin/python3 -X frozen_modules=off\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom megalint.cli import run\n"
NEW_PIP = "#!/venv/bin/python3\nimport sys\nfrom megalint.cli import run\n"


def script(tmp_path, text: str) -> list[str]:
    path = tmp_path / "megalint"
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return [os.fspath(path)]


def test_the_interpreter_and_the_import_of_re_are_read_from_the_script(tmp_path):
    old = script(tmp_path, OLD_PIP)
    assert startup.interpreter_of(old) == ["/venv/bin/python3", "-X", "frozen_modules=off"]
    assert startup.wrapper_imports_re(old)
    new = script(tmp_path, NEW_PIP)
    assert startup.interpreter_of(new) == ["/venv/bin/python3"] and not startup.wrapper_imports_re(new)
    assert startup.interpreter_of([os.fspath(tmp_path / "missing")]) is None


def test_the_floor_runs_the_interpreter_every_other_case_megalint():
    assert startup.command(["megalint"], ["/venv/bin/python3", "-c", "pass"]) == ["/venv/bin/python3", "-c", "pass"]
    assert startup.command(["megalint"], ["--no-cache", "x.sh"]) == ["megalint", "--no-cache", "x.sh"]

from megalint.cli import run

run()

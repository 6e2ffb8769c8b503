"""Reports on one script that commands other than the main one show: verdicts.py, which rules
decided what for each launch (`megalint explain`); memory.py, the memory breakdown of each launch
(`megalint memory`). Each is plain data, ready for JSON; the command renders it as text."""

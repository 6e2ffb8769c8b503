"""The parts of bench/real_scripts.py: the repository list and checkouts (`repos`), which files
are read and the flags they write (`files`), what is recorded of each checked file (`count`), a
repository's figures (`aggregate`), the process pool (`worker`) and the printed report (`report`)."""

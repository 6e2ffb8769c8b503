"""Checking files: the pipeline run over the files of one run, with each file's configuration,
the rules it selects, its suppression comments and its fixes.

setup.py: what each configuration means for the files under it (rules loaded, selected,
settings of the pipeline), made when first needed; one_file.py: one script's findings after
per-file ignores, inline suppressions and severity overrides, and its fixes; outcome.py: what
checking one script gives, as the cache keeps it; cache.py: the cache of results; parallel.py:
the files checked on every core, or read from the cache; run.py: the files of one run, found,
read, checked and written back. A run whose every file is in the cache imports no pipeline.
"""

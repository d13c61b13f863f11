"""The real programs, as the truth the engines are checked against.

One sub-package per runtime: its recorder (`python -m oracles.<runtime>.record...`, run by
a maintainer, outside the test suite), the harness the recorder runs the real program
through, the cases it runs (ours, or the program's own tests extracted as data), and its
recordings, which the tests in `tests/` read. `suites` lists the extracted upstream test
suites; `python -m oracles.suites_report` runs them and tallies what they hold.

Nothing in `app/` imports this package; it imports only `app` and `tests.support`.
"""

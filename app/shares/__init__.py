"""Share links: a playground state stored immutably under its content hash.

Pure core (no Flask): `state.py` validates and normalises a state and computes its id,
`store.py` keeps states in SQLite. The HTTP side is `app/web/shares.py`.
"""

"""`./playground check TARGET`: the playground's verdicts on one template, for CI.

It reads a target as the page's sources do (`target.py`), renders the standard
conversations (`conversations.py`) with every engine through the portability report,
reads tool calls back through each runtime's parser (`round_trip.py`), adds the
Analysis view's findings, and writes them as text, JSON or JUnit (`output.py`).
"""

"""What the user set up in the playground, as one typed value.

`playground.py` holds `PlaygroundState`: its one validation, its JSON form (the body
`/api/render` and `/api/shares` take, and what a share stores and hashes) and the render
request it holds. `form.py` maps it to and from the page's form fields. Plain Python,
no Flask: the page, the API, shares and the output views all use the same class.
"""

from app.state.playground import PlaygroundState, SourceRef

__all__ = ["PlaygroundState", "SourceRef"]

"""The TGI engine: what text-generation-inference's chat route renders.

`engine.py` follows the router's steps; `router.py` its request types and reshaping,
`template.py` its MiniJinja environment, run by the `minijinja` Python package.
"""

from app.render.engines.tgi.engine import TgiEngine

__all__ = ["TgiEngine"]

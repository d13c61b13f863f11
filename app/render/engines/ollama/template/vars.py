"""The names a Go template's actions use, as Ollama's `Template.Vars` lists them.

`Vars` (ollama/ollama `template/template.go` at fb30760996871fa9460115c753afd2c60d4ab0f7)
walks the parsed template and keeps every field's and variable's identifiers
(`.Function.Name` gives "Function" and "Name", `$.Tools` gives "$" and "Tools"),
lower-cased. This reads the same names from the source's `{{ ... }}` actions, without
Go: comments and string literals are dropped first, so only code counts, and a variable
being declared (`$i, $m := ...`, `$x = ...`) is not a use. Checked against Go's own
parse (text/template/parse, walked as `Vars` walks it) on Ollama's 20 index templates and
the 97 library templates `@huggingface/ollama-utils` 0.0.18 carries: the same sets. The
Go worker's parse remains the exact one for any template.
"""

from __future__ import annotations

import re

#: An action, its trim markers included; a comment action is `{{/* ... */}}`.
_ACTION = re.compile(r"\{\{-?(.*?)-?\}\}", re.DOTALL)
_COMMENT = re.compile(r"^\s*/\*.*\*/\s*$", re.DOTALL)
#: Go's string literals: interpreted ("..."), raw (`...`) and rune ('x') ones.
_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|`[^`]*`|\'(?:\\.|[^\'\\])*\'')
#: A field chain (`.A.B`) or a variable with fields (`$x.A`, `$.A`).
_NAMES = re.compile(r"(\$\w*)?((?:\.[A-Za-z_]\w*)+)")
#: A variable on its own, unless it is being declared or assigned.
_VARIABLE = re.compile(r"\$\w*(?![\w.])(?!\s*(?::=|=|,))")


def template_vars(template: str) -> set[str]:
    """The lower-cased identifiers of the fields and variables the template's actions use."""
    names: set[str] = set()
    for action in _ACTION.findall(template):
        if _COMMENT.match(action):
            continue
        code = _LITERAL.sub(" ", action)
        for variable, fields in _NAMES.findall(code):
            if variable:
                names.add(variable.lower())
            names.update(name.lower() for name in fields.split(".") if name)
        names.update(variable.lower() for variable in _VARIABLE.findall(code))
    return names

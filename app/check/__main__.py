"""`python -m app.check TARGET` (what `./playground check` runs)."""

import sys

from app.check.cli import main

if __name__ == "__main__":
    sys.exit(main())

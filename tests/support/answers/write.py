"""`python -m tests.support.answers.write`: record the Completion menu's corpus again."""

from tests.support.answers import COMPLETIONS, write_completions

if __name__ == "__main__":
    print(f"{write_completions()} entries written to {COMPLETIONS.name}")

"""The C back end: one readable C file per program (see ``program.py``)."""
from .program import generate_c

__all__ = ["generate_c"]

"""`python -m t4p4s`: the command line (see t4p4s/cli.py)."""
import sys

from t4p4s.cli import main

sys.exit(main())

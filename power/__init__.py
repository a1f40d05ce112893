"""The power governor sidecar (power/sidecar.py): `python -m power --help`."""

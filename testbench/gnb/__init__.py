"""Test tooling for the gNB pipeline: scapy layers for the radio-side
headers (layers.py) and builders for the frames the pipeline receives and
the frames it must send (frames.py)."""

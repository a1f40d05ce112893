"""Test and scenario helpers around a running hybrid topology (the
topology itself is controller/launch/): gnbctl through its command line,
paced traffic and captures, the SN check of what was captured, and one
traffic run with live offload shifts."""

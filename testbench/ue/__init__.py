"""UE emulator for RLC AM downlink (issue 13, Buffering as a Service): the
receiving RLC AM entity per DRB (rlc_am_rx.py), STATUS PDUs (status_pdu.py),
a seeded lossy radio link (link.py), the emulator on an AF_PACKET socket
(emulator.py), its command line (__main__.py) and a wrapper that runs that
command in a network namespace for tests and demos (process.py)."""

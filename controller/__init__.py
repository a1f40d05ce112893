"""gnbctl: the P4Runtime controller of the gNB user plane (NIC and host
targets). The library is usable without the CLI: `topology.load()`, then
`targets.connect()`, then the functions of `drbs`, `offload`, `counters`."""

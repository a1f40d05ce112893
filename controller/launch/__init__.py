"""Starting the gNB's processes: the NIC process, host processes joined to
it by memif VFs, the buffering service and the power governor sidecar.

processes.py builds every target's command line (TargetSpec) and supervises
one process; baas.py and power.py do the same for the sidecars;
topology.py (HybridTopology) is the whole hybrid topology on one machine in
network namespaces, joined by veth pairs (namespaces.py), for `make demo`,
the tests and the benchmarks."""

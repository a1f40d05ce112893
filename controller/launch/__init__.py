"""Starting the gNB's processes: the NIC process, host processes joined to
it by memif VFs, the buffering service and the power governor sidecar.

processes.py builds every target's command line (TargetSpec) and supervises
one process; baas.py and power.py do the same for the sidecars. updown.py
is `gnbctl up` / `gnbctl down`: the processes a topology file describes,
started detached, their pid files and logs in its run directory.
topology.py (HybridTopology) is the whole hybrid topology on one machine in
network namespaces, joined by veth pairs (namespaces.py), for `make demo`,
the tests and the benchmarks."""

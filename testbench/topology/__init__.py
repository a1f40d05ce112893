"""The hybrid gNB topology on one machine: the NIC process, host processes
joined to it by memif VFs, and network namespaces for the UPF (N3), the
radio side and the buffering service, joined by veth pairs."""

"""Benchmark harness: dpdk-testpmd as the reference, our compiled pipelines
measured against it on the same vdevs and lcore in the same run."""

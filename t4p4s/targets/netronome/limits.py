"""The Agilio CX profile: what the Netronome P4 SDK accepts and what the
card holds, each with where it comes from.

Sources, cited below by their tag:

[P001]  paper 001 (../shared/papers/001_*.txt), section V-D2 and Table I:
        Agilio CX 2x40G, NFP BSP of 2018-06-29, P4 SDK 6.1.0.0.
[BUILD] public nfp4build invocations (Netronome's own open-nfpsw
        repositories, e.g. P4-16_INT/utils/build.sh, and users' build
        scripts): every one passes ``--nfirc_default_table_size 65536``.
[EX18]  Netronome's P4-16 example of 2018 (open-nfpsw/P4-16_INT,
        ioam_endpoint.p4, built with "nfp-sdk-6.1-preview"): calls
        ``mark_to_drop()`` without arguments and assigns bit<16> values
        to ``egress_spec``.
[HDOC]  "Migrating from bmv2" and "Replication" notes of
        RuiCunhaM/netronome-p4-documentation (users of the SDK):
        ``mark_to_drop()`` takes no argument, ``egress_spec`` is 16 bits,
        ``instance_type`` codes for I2E/E2E clones, resubmit and
        recirculate, digests work with caveats, and only one replication
        operation per ingress or egress pass.

The Agilio P4 SDK user guide itself is not public; where no source above
states a fact, the constant says it is an assumption and why we chose it.
"""
from __future__ import annotations

MIB = 1024 * 1024

# [P001] "Netronome's P4 design restricts each table to a maximum of 64K
# entries but supports up to 256 tables."
MAX_TABLE_ENTRIES = 65_536
MAX_TABLES = 256

# [BUILD] What nfp4build gives a table without a `size` property when run
# with --nfirc_default_table_size 65536, which `make nfp4build` passes.
# (Our own DPDK runtime uses 1,024, as p4c's BMv2 back end does.)
DEFAULT_TABLE_SIZE = 65_536

# [P001] Table I: the MAT lives in EMEM ("EMU", 2G) behind its 6 MB cache.
EMU_BYTES = 2 * 1024 * MIB
EMU_CACHE_BYTES = 6 * MIB

# Match kinds of the v1model.p4 the SDK ships. Assumption: P4 SDK 6.1
# (2018, [P001]) ships the v1model.p4 of its time, which declares exact,
# ternary, lpm and range; `optional` entered p4c's v1model.p4 in 2020, so
# nfp4build cannot resolve it.
MATCH_KINDS = frozenset({"exact", "ternary", "lpm", "range"})

# Assumption: no public document gives a key width limit. We warn above
# 512 bits, one 64-byte EMEM cache line (the alignment Netronome's own
# generated code uses for EMEM data, `aligned(64)`), so that such a key is
# looked at before an nfp4build run of many minutes finds out. (The
# aligned(64) EMEM declarations are quoted in [HDOC]'s "Tips and Tricks".)
MAX_KEY_BITS = 512

# Extern objects the card implements: counters and registers (used by
# every example in [EX18]/[HDOC]), meters (Netronome's open-nfpsw
# meters_lab and p4_basic_lb_metering_nic). Anything else is reported as
# unverified, not rejected.
EXTERN_OBJECTS = frozenset({"counter", "direct_counter", "register", "meter",
                            "direct_meter"})

# Extern functions of the 2018 v1model.p4 that [HDOC]/[EX18] show working.
EXTERN_FUNCTIONS = frozenset({
    "mark_to_drop", "hash", "clone", "clone3", "resubmit", "recirculate",
    "digest", "verify_checksum", "update_checksum", "random",
})

# Extern functions added to p4c's v1model.p4 after the SDK's (log_msg
# 2019, assert/assume 2020, the *_preserving_field_list forms 2021): the
# SDK's v1model.p4 does not declare them, so nfp4build rejects the program.
EXTERN_FUNCTIONS_NEWER_THAN_SDK = frozenset({
    "log_msg", "assert", "assume", "resubmit_preserving_field_list",
    "recirculate_preserving_field_list", "clone_preserving_field_list",
})

# Extern functions that make copies of the packet. [HDOC]: the card keeps
# the pending replication in egress_spec, so one pass can do one of them.
REPLICATING_FUNCTIONS = frozenset({"clone", "clone3", "resubmit", "recirculate"})

# Assumption: the NFP has CRC acceleration ([P001] section V-A) and the
# internet checksum; identity needs no hardware. Other HashAlgorithm
# members are reported as unverified.
HASH_ALGORITHMS = frozenset({"crc32", "crc16", "csum16", "identity"})

# Memory estimate, per table entry: key bytes + action data bytes + this.
# Calibrated on [P001] Table I: going from 1K to 64K MAT entries raised
# EMU cache use from 9.08 % to 40.97 % of 6 MB, 0.3189 * 6 MiB / 64,512
# entries = 31.1 bytes per entry, for a 4-byte key (destination IPv4
# address) and a DRB number of 2 to 4 bytes: 31.1 - 4 - (2..4) = 23..25.
# It stands for the hash bucket link, the action number and the entry's
# flags the SDK keeps next to key and action data.
ENTRY_OVERHEAD_BYTES = 24

# Assumption: the NFP's memory units are addressed in 32-bit words, so
# register cells are stored in whole words. Assumption: counters hold
# 64-bit values (a 32-bit byte count wraps in under a second at 40 Gb/s),
# 8 bytes per unit, 16 for packets_and_bytes.
WORD_BYTES = 4
COUNTER_UNIT_BYTES = 8

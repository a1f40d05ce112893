/* Every kind of object the P4Runtime server handles, for its tests: a
 * table per match kind (exact with a direct counter and a large size,
 * lpm, ternary, range, optional), a small table to fill, a const table
 * with a const default action, an indexed counter, a register and an I2E
 * clone. Traffic: the exact table on f1 picks the egress port and writes
 * b1; the other tables write h1 or b2 so each hit shows in the packet. */
#include "../t4p4s/common/data.p4"

const bit<32> CLONE_SESSION = 7;

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) port_counter;
    register<bit<32>>(16) seen;
    direct_counter(CounterType.packets_and_bytes) exact_hits;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port, bit<8> tag) {
        standard_metadata.egress_spec = port;
        hdr.data.b1 = tag;
    }
    action set_h1(bit<16> value) {
        hdr.data.h1 = value;
    }
    action set_b2(bit<8> value) {
        hdr.data.b2 = value;
    }
    action miss() {
        hdr.data.b2 = 0xee;
    }

    table t_exact {
        key = { hdr.data.f1 : exact; }
        actions = { forward; drop; }
        default_action = drop();
        counters = exact_hits;
        size = 65536;
    }
    table t_lpm {
        key = { hdr.data.f2 : lpm; }
        actions = { set_h1; NoAction; }
        default_action = NoAction();
    }
    table t_ternary {
        key = { hdr.data.h1 : ternary; hdr.data.b2 : exact; }
        actions = { set_b2; @defaultonly miss; }
        default_action = miss();
    }
    table t_range {
        key = { hdr.data.h2 : range; }
        actions = { set_h1; NoAction; }
        default_action = NoAction();
    }
    table t_optional {
        key = { hdr.data.b1 : optional; hdr.data.b2 : exact; }
        actions = { set_b2; NoAction; }
        default_action = NoAction();
    }
    table t_small {
        key = { hdr.data.h2 : exact; }
        actions = { set_b2; NoAction; }
        default_action = NoAction();
        size = 4;
    }
    table t_const {
        key = { hdr.data.b2 : exact; }
        actions = { set_h1; NoAction; }
        const default_action = NoAction();
        const entries = {
            0x01 : set_h1(0x0101);
            0x02 : set_h1(0x0202);
        }
    }

    apply {
        port_counter.count((bit<32>)standard_metadata.ingress_port);
        if (!hdr.data.isValid()) {
            drop();
            return;
        }
        seen.write((bit<32>)hdr.data.b2 & 15, hdr.data.f2);
        t_exact.apply();
        t_lpm.apply();
        t_ternary.apply();
        t_range.apply();
        t_optional.apply();
        t_small.apply();
        t_const.apply();
        if (hdr.data.b1 == 0xcc) {
            clone(CloneType.I2E, CLONE_SESSION);
        }
    }
}

V1Switch(DataParser(), NoVerifyChecksum(), ingress(), NoEgress(), NoComputeChecksum(),
         DataDeparser()) main;

// A control applied twice as a sub-control instance: the mid end inlines
// it (copy-in/copy-out parameters, its table shared by both applies and
// named ingress.acc.scaling, its local initializer run at each apply).
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  op;
    bit<8>  a;
    bit<8>  b;
    bit<8>  hits;
    bit<16> total;
}

struct headers_t { data_t d; }
struct metadata_t { bit<8> unused; }

parser parse(packet_in pkt, out headers_t hdr, inout metadata_t meta,
             inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.d);
        transition accept;
    }
}

control Accumulate(inout headers_t hdr, in bit<8> amount, out bit<8> doubled) {
    bit<8> step = 1;
    action add(bit<8> scale) {
        hdr.d.total = hdr.d.total + (bit<16>)(amount * scale);
    }
    action skip() { }
    table scaling {
        key = { hdr.d.op : exact; }
        actions = { add; skip; }
        default_action = skip();
    }
    apply {
        if (scaling.apply().hit) {
            hdr.d.hits = hdr.d.hits + step;
        }
        step = step + 1;
        doubled = amount + amount;
        // copy-in: the caller's argument does not change under us
        hdr.d.a = 0;
    }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    Accumulate() acc;
    bit<8> doubled_a;
    bit<8> doubled_b;
    apply {
        acc.apply(hdr, hdr.d.a, doubled_a);
        acc.apply(hdr, hdr.d.b, doubled_b);
        hdr.d.a = doubled_a;
        hdr.d.b = doubled_b;
        standard_metadata.egress_spec = 1;
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) { apply { } }
control verify_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control compute_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control deparse(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.d); } }

V1Switch(parse(), verify_ck(), ingress(), egress(), compute_ck(), deparse()) main;

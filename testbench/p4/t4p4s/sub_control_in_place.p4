/* Sub-controls applied once: alias-free arguments are used in place (no
 * copy), overlapping ones still get the spec's copy-in/copy-out, so the
 * difference cannot be seen in the output. */
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}

struct headers_t { data_t d; }
struct metadata_t { bit<8> sum; }

parser parse(packet_in pkt, out headers_t hdr, inout metadata_t meta,
             inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.d);
        transition accept;
    }
}

// Applied with (hdr, hdr.d.a): `amount` must keep the value it had at the
// call although the callee zeroes hdr.d.a before reading it.
control Overlapping(inout headers_t hdr, in bit<8> amount) {
    apply {
        hdr.d.a = 0;
        hdr.d.b = amount;
    }
}

// Applied with (hdr, meta): in place. The table key and the action read
// and write through the parameters.
control InPlace(inout headers_t hdr, inout metadata_t meta) {
    action add(bit<8> x) {
        meta.sum = hdr.d.c + x;
    }
    table t {
        key = { hdr.d.d : exact; }
        actions = { add; NoAction; }
        default_action = NoAction();
    }
    apply {
        meta.sum = 0;
        t.apply();
        hdr.d.c = meta.sum;
    }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    Overlapping() overlapping;
    InPlace() in_place;
    apply {
        overlapping.apply(hdr, hdr.d.a);
        in_place.apply(hdr, meta);
        hdr.d.d = meta.sum;
        standard_metadata.egress_spec = 1;
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) { apply { } }
control verify_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control compute_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control deparse(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.d); } }

V1Switch(parse(), verify_ck(), ingress(), egress(), compute_ck(), deparse()) main;

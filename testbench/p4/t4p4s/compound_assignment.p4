// Compound assignment (P4-16 "Assignment statement", 1.2.5): `a op= b` is
// `a = a op b` with `a` evaluated once, which shows when its index calls a
// function with a side effect.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> a; bit<8> b; bit<8> c; bit<8> e; bit<8> f; bit<8> g;
    bit<8> h; bit<8> i; bit<8> j; bit<8> k; bit<8> l; bit<8> m;
    bit<8> calls;
}
header cell_t { bit<8> v; }

struct headers_t { data_t d; cell_t[2] s; }
struct metadata_t { bit<8> unused; }

bit<1> pick(inout bit<8> calls) {
    calls += 1;
    return 1;
}

parser parse(packet_in pkt, out headers_t hdr, inout metadata_t meta,
             inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.d);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        hdr.d.a += 5;
        hdr.d.b -= 3;
        hdr.d.c *= 3;
        hdr.d.e |= 0x0F;
        hdr.d.f &= 0xF0;
        hdr.d.g ^= 0xFF;
        hdr.d.h <<= 2;
        hdr.d.i >>= 1;
        hdr.d.j |+|= 200;
        hdr.d.k |-|= 50;
        hdr.d.l /= 4;
        hdr.d.m %= 5;
        bit<8> calls = 0;
        hdr.s[pick(calls)].v += 10;
        hdr.d.calls = calls;
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) { apply { } }
control verify_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control compute_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control deparse(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.d); pkt.emit(hdr.s); }
}

V1Switch(parse(), verify_ck(), ingress(), egress(), compute_ck(), deparse()) main;

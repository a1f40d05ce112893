/* IPv4 LPM router with an MPLS-like label stack, GTP-U-like odd-width
 * fields, checksum update, registers, counters, hash and clone. */
#include <core.p4>
#include <v1model.p4>

const bit<16> ETH_IPV4 = 16w0x0800;
const bit<16> ETH_MPLS = 0x8847;
const bit<8>  PROTO_UDP = 17;
const int     STACK_DEPTH = 3;
const bit<32> FOLDED = (32w1 << 4) + (bit<32>)(8w3 ++ 8w1) - 2;

typedef bit<32> ip4_t;
enum bit<8> Color { GREEN = 0, RED = 2 }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    ip4_t srcAddr; ip4_t dstAddr;
}
header pdcp_t { bit<1> dc; bit<5> r; bit<18> sn; }
header rlc_t  { bit<1> dc; bit<1> p; bit<2> si; bit<12> sn; }

struct headers {
    ethernet_t ethernet;
    mpls_t[STACK_DEPTH] mpls;
    ipv4_t ipv4;
    pdcp_t pdcp;
    rlc_t rlc;
}
struct metadata { bit<16> flow_hash; bit<12> sn; int<8> delta; bool seen; }

parser RParser(packet_in pkt, out headers hdr, inout metadata meta,
               inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETH_MPLS: parse_mpls;
            ETH_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: parse_ipv4;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.HeaderTooShort);
        transition select(hdr.ipv4.protocol, hdr.ipv4.fragOffset) {
            (PROTO_UDP, 0): parse_pdcp;
            (0x00 .. 0x10, _): accept;
            (8w0x80 &&& 8w0x80, 13w0 &&& 13w0x1fff): reject;
            default: accept;
        }
    }
    state parse_pdcp {
        pkt.extract(hdr.pdcp);
        transition select(pkt.lookahead<bit<4>>()) {
            4w0x8 &&& 4w0x8: parse_rlc;
            default: accept;
        }
    }
    state parse_rlc {
        pkt.extract(hdr.rlc);
        pkt.advance(32w8);
        transition accept;
    }
}

control RVerify(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control RIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t std) {
    register<bit<32>>(1024) pkt_count;
    counter(64, CounterType.packets_and_bytes) port_counter;
    direct_counter(CounterType.packets) route_hits;

    action drop() { mark_to_drop(std); }
    action route(bit<48> dmac, PortId_t port) {
        hdr.ethernet.src = hdr.ethernet.dst;
        hdr.ethernet.dst = dmac;
        std.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action pop_label() { hdr.mpls.pop_front(1); }
    action push_label(bit<20> label) {
        hdr.mpls.push_front(1);
        hdr.mpls[0].setValid();
        hdr.mpls[0] = { label, 3w0, 1w1, 8w64 };
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr : lpm; }
        actions = { route; drop; NoAction; }
        default_action = drop();
        counters = route_hits;
        size = 4096;
    }
    table acl {
        key = {
            hdr.ipv4.srcAddr : ternary;
            hdr.ipv4.protocol : range;
            std.ingress_port : optional;
        }
        actions = { drop; NoAction; }
        const default_action = NoAction();
        const entries = {
            (32w0x0a000000 &&& 32w0xff000000, 6 .. 17, _) : drop();
            @priority(7) (_, _, 9w1) : NoAction();
        }
    }
    table labels {
        key = { hdr.mpls[0].label : exact; }
        actions = { pop_label; push_label; }
    }
    apply {
        bit<32> count;
        pkt_count.read(count, (bit<32>)std.ingress_port);
        pkt_count.write((bit<32>)std.ingress_port, count |+| 1);
        port_counter.count((bit<32>)std.ingress_port);
        hash(meta.flow_hash, HashAlgorithm.crc16, 16w0,
             { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol }, 32w65536);
        meta.sn = hdr.rlc.sn + 12w1;
        meta.delta = -8s3;
        meta.seen = hdr.rlc.sn[11:8] == 4w0xF || !hdr.pdcp.isValid();
        hdr.pdcp.sn = ((bit<18>)meta.sn ++ 6w0)[23:6];
        if (hdr.mpls[0].isValid()) {
            labels.apply();
        }
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            switch (ipv4_lpm.apply().action_run) {
                route: { acl.apply(); }
                drop:
                default: { exit; }
            }
        } else if (!acl.apply().hit) {
            drop();
        }
        if (std.instance_type == 0) {
            clone(CloneType.I2E, 32w5);
        }
        log_msg("ingress port {}", { std.ingress_port });
    }
}

control REgress(inout headers hdr, inout metadata meta, inout standard_metadata_t std) {
    apply { }
}

control RCompute(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control RDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.pdcp);
        pkt.emit(hdr.rlc);
    }
}

V1Switch(RParser(), RVerify(), RIngress(), REgress(), RCompute(), RDeparser()) main;

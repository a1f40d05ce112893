/* Multicast through the packet replication engine (v1model: a packet whose
 * standard_metadata.mcast_grp is not 0 at the end of ingress leaves as one
 * copy per replica of that group, each through egress with egress_port and
 * egress_rid set; instance_type 5, replication, as simple_switch). Egress
 * stamps every copy with what it saw, so the copies tell themselves apart:
 * f1 = instance_type, h1 = egress_rid, b2 = egress_port, and in the tag
 * header (made valid in ingress, so it lives outside the packet) rid and
 * port again. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<32> f1;
    bit<32> f2;
    bit<16> h1;
    bit<16> h2;
    bit<8>  b1;
    bit<8>  b2;
}

header tag_t {
    bit<16> rid;
    bit<16> port;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
    tag_t      tag;
}

struct metadata_t { }

parser McParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.data);
        transition accept;
    }
}

control NoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control NoComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action multicast_to(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
    }
    action multicast_tagged(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
        hdr.tag.setValid();
        hdr.tag.rid = 0xeeee;
        hdr.tag.port = 0xeeee;
    }
    action multicast_dropped(bit<16> grp) {
        standard_metadata.mcast_grp = grp;
        mark_to_drop(standard_metadata);    // sets mcast_grp to 0 too
    }
    action unicast() { }
    table pick {
        key = { hdr.data.b1 : exact; }
        actions = { multicast_to; multicast_tagged; multicast_dropped; unicast; }
        default_action = unicast();
    }
    apply {
        // a multicast group, when set, overrides the unicast port
        standard_metadata.egress_spec = 1;
        // every copy carries what ingress wrote
        hdr.data.f2 = 0x12345678;
        pick.apply();
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) {
    apply {
        hdr.data.f1 = standard_metadata.instance_type;
        hdr.data.h1 = standard_metadata.egress_rid;
        hdr.data.b2 = (bit<8>)standard_metadata.egress_port;
        if (hdr.tag.isValid()) {
            hdr.tag.rid = standard_metadata.egress_rid;
            hdr.tag.port = (bit<16>)standard_metadata.egress_port;
        }
        if (standard_metadata.egress_rid == 99) {
            mark_to_drop(standard_metadata);    // this replica only
        }
    }
}

control McDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.data);
        packet.emit(hdr.tag);
    }
}

V1Switch(McParser(), NoVerifyChecksum(), ingress(), egress(), NoComputeChecksum(),
         McDeparser()) main;

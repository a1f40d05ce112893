// P4-16 functions (spec "Function declarations", "Calling convention: call
// by copy in/copy out", "Expression evaluation order"), inlined by the mid
// end (t4p4s/midend/inline_functions.py). The low nibble of `op` picks the
// case; an `op` with high nibble 0xF makes the parser, through a function
// called in its select, extract one more header.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8> op;
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> r0;
    bit<8> r1;
    bit<8> r2;
    bit<8> r3;
    bit<8> r4;
    bit<8> r5;
}
header extra_t { bit<8> x; }

struct headers_t { data_t d; extra_t extra; }
struct metadata_t { bit<8> unused; }

bit<8> max8(in bit<8> x, in bit<8> y) {
    return x > y ? x : y;
}

// a function calling a function, nested calls as arguments
bit<8> max3(in bit<8> x, in bit<8> y, in bit<8> z) {
    return max8(max8(x, y), z);
}

// early returns in if/else; statements after a branch that may return
bit<8> classify(in bit<8> v) {
    if (v == 0) {
        return 1;
    } else if (v < 16) {
        bit<8> small = v + 100;
        return small;
    }
    bit<8> big = v >> 4;
    if (big == 15)
        return 200;
    return big;
}

// out parameters are copied out when the function returns, early or not
bool split(in bit<8> v, out bit<4> hi, out bit<4> lo) {
    hi = v[7:4];
    lo = v[3:0];
    if (hi == 0)
        return false;
    lo = lo + 1;
    return true;
}

// an inout parameter: the order in which calls run shows in `trace`
bit<8> step(inout bit<8> trace, in bit<8> id) {
    trace = (trace << 2) | id;
    return id;
}

// an in parameter is a copy even when its argument is also passed inout
bit<8> bump(inout bit<8> x, in bit<8> old) {
    x = x + 1;
    return old;
}

// void, with an early return; a whole header inout
void clear_unless(inout data_t d, in bool keep) {
    if (keep)
        return;
    d.c = 0;
}

// an out header starts invalid
void fresh(out extra_t e) {
    if (!e.isValid()) {
        e.setValid();
        e.x = 0x42;
    }
}

bit<4> high_nibble(in bit<8> v) {
    return v[7:4];
}

parser parse(packet_in pkt, out headers_t hdr, inout metadata_t meta,
             inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.d);
        transition select(high_nibble(hdr.d.op)) {
            0xF: parse_extra;
            default: accept;
        }
    }
    state parse_extra {
        pkt.extract(hdr.extra);
        transition accept;
    }
}

control ingress(inout headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    action use_max(bit<8> floor) {
        hdr.d.r5 = max8(hdr.d.a, floor);
    }
    table t {
        key = { hdr.d.op : exact; }
        actions = { use_max; NoAction; }
        default_action = NoAction();
    }
    apply {
        standard_metadata.egress_spec = 1;
        bit<4> kind = hdr.d.op[3:0];
        if (kind == 1) {
            hdr.d.r0 = max8(hdr.d.a, hdr.d.b);
            hdr.d.r1 = max3(hdr.d.a, hdr.d.b, hdr.d.c);
            hdr.d.r2 = classify(hdr.d.a);
            hdr.d.r3 = classify(hdr.d.b);
            hdr.d.r4 = classify(hdr.d.c);
        } else if (kind == 2) {
            bit<4> hi;
            bit<4> lo;
            bool ok = split(hdr.d.a, hi, lo);
            hdr.d.r0 = hi ++ lo;
            hdr.d.r1 = ok ? 8w1 : 8w0;
        } else if (kind == 3) {
            bit<8> t = 0;
            // left to right: trace 0 -> 1 -> 6; 1 + 2 * 4
            hdr.d.r0 = step(t, 1) + step(t, 2) * 4;
            hdr.d.r1 = t;
            // the outer call's inout copy-in happens before the inner call
            // runs, and its copy-out overwrites what the inner call wrote
            hdr.d.r2 = step(t, step(t, 1) + 1);
            hdr.d.r3 = t;
            // the left operand is read before the call changes it
            hdr.d.r4 = t + step(t, 3);
            hdr.d.r5 = t;
        } else if (kind == 4) {
            hdr.d.r0 = hdr.d.a + bump(hdr.d.a, hdr.d.a);
            bit<8> t1 = 0;
            bit<8> t2 = 0;
            bit<8> t3 = 0;
            // calls in conditions, short-circuited
            if (hdr.d.b == 1 && step(t1, 3) == 3) {
                hdr.d.r1 = 0xAA;
            } else {
                hdr.d.r1 = 0xBB;
            }
            if (hdr.d.b == 1 || step(t2, 2) == 2) {
                hdr.d.r2 = t2 + 0x10;
            }
            hdr.d.r3 = hdr.d.b == 1 ? step(t3, 1) : step(t3, 2) + 10;
            hdr.d.r4 = t1;
            hdr.d.r5 = t3;
        } else if (kind == 5) {
            clear_unless(hdr.d, hdr.d.b == 1);
            if (classify(hdr.d.a) == 1) {
                hdr.d.r0 = 0xEE;
            }
            t.apply();
        } else if (kind == 6) {
            hdr.d.r0 = hdr.extra.isValid() ? hdr.extra.x : 0;
            fresh(hdr.extra);
            hdr.d.r1 = hdr.extra.x;
        }
    }
}

control egress(inout headers_t hdr, inout metadata_t meta,
               inout standard_metadata_t standard_metadata) { apply { } }
control verify_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control compute_ck(inout headers_t hdr, inout metadata_t meta) { apply { } }
control deparse(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.d); pkt.emit(hdr.extra); }
}

V1Switch(parse(), verify_ck(), ingress(), egress(), compute_ck(), deparse()) main;

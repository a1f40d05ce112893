// A table whose actions carry action data of different sizes: the table's
// data_size is the largest (regression: it once did not compile).
#include <core.p4>
#include <v1model.p4>

header d_t { bit<8> k; bit<8> x; bit<16> y; }
struct H { d_t d; }
struct M { }

parser P(packet_in p, out H h, inout M m, inout standard_metadata_t sm) {
    state start { p.extract(h.d); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set_x(bit<8> v) { h.d.x = v; }
    action set_y(bit<16> v) { h.d.y = v; }
    table t {
        key = { h.d.k : exact; }
        actions = { set_x; set_y; NoAction; }
        default_action = NoAction();
    }
    apply { t.apply(); sm.egress_spec = 1; }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H h, inout M m) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.d); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;

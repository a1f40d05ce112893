/* The gNB user plane on DPDK host cores: port 0 N3, port 1 radio side,
 * port 2 the buffering service (p4src/gnb/constants.p4). */
#include "gnb/pipeline.p4"

V1Switch(GnbParser(), GnbVerifyChecksum(), GnbIngress(), GnbEgress(), GnbComputeChecksum(),
         GnbDeparser()) main;

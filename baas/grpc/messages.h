// The API's structs (baas/include/baas/api.h) as baas.proto messages.
#ifndef BAAS_GRPC_MESSAGES_H
#define BAAS_GRPC_MESSAGES_H

#include <baas/api.h>

#include "baas.pb.h"

namespace baas_grpc {

void to_message(const baas_drb_key &in, baas::v1::DrbKey *out);
void to_message(const baas_counters &in, baas::v1::Counters *out);
void to_message(const baas_drb_info &in, baas::v1::DrbInfo *out);
void to_message(const baas_global_info &in, baas::v1::GlobalStats *out);
void to_message(const baas_config &in, baas::v1::Config *out);
void to_message(const baas_event &in, baas::v1::Event *out);

// The fields an update sets, over `config`.
void apply(const baas::v1::ConfigUpdate &update, baas_config *config);

}  // namespace baas_grpc

#endif

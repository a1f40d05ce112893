#include "messages.h"

#include <string>

namespace baas_grpc {

void to_message(const baas_drb_key &in, baas::v1::DrbKey *out)
{
    out->set_ue_id(in.ue_id);
    out->set_lcid(in.lcid);
}

void to_message(const baas_counters &in, baas::v1::Counters *out)
{
    out->set_pdus_received(in.pdus_received);
    out->set_bytes_received(in.bytes_received);
    out->set_status_received(in.status_received);
    out->set_acked(in.acked);
    out->set_nacked(in.nacked);
    out->set_retransmitted(in.retransmitted);
    out->set_poll_timeouts(in.poll_timeouts);
    out->set_rlf(in.rlf);
    out->set_released_rlf(in.released_rlf);
    out->set_released_bound(in.released_bound);
    out->set_released_flush(in.released_flush);
    out->set_nack_not_held(in.nack_not_held);
    auto &dropped = *out->mutable_dropped();
    for (int r = 0; r < BAAS_DROP_REASONS; r++) {
        const char *name = baas_drop_reason_name(static_cast<baas_drop_reason>(r));
        dropped[name ? name : "reason_" + std::to_string(r)] = in.dropped[r];
    }
}

void to_message(const baas_drb_info &in, baas::v1::DrbInfo *out)
{
    to_message(in.key, out->mutable_drb());
    out->set_sn_bits(in.sn_bits);
    out->set_tx_next_ack(in.tx_next_ack);
    out->set_tx_next(in.tx_next);
    out->set_poll_sn(in.poll_sn);
    out->set_poll_timer_running(in.poll_timer_running);
    out->set_held(in.held);
    out->set_held_bytes(in.held_bytes);
    to_message(in.counters, out->mutable_counters());
}

void to_message(const baas_global_info &in, baas::v1::GlobalStats *out)
{
    out->set_n_drbs(in.n_drbs);
    out->set_held(in.held);
    out->set_held_bytes(in.held_bytes);
    out->set_pool_size(in.pool_size);
    out->set_pool_in_use(in.pool_in_use);
    out->set_n_lcores(in.n_lcores);
    to_message(in.counters, out->mutable_counters());
}

void to_message(const baas_config &in, baas::v1::Config *out)
{
    out->set_t_poll_retransmit_ms(in.t_poll_retransmit_ms);
    out->set_max_retx_threshold(in.max_retx_threshold);
    out->set_drb_max_pdus(in.drb_max_pdus);
    out->set_max_pdus(in.max_pdus);
}

static baas::v1::EventType event_type(baas_event_type type)
{
    switch (type) {
    case BAAS_EVENT_RLF: return baas::v1::EVENT_TYPE_RLF;
    case BAAS_EVENT_OVERFLOW: return baas::v1::EVENT_TYPE_OVERFLOW;
    case BAAS_EVENT_NACK_NOT_HELD: return baas::v1::EVENT_TYPE_NACK_NOT_HELD;
    }
    return baas::v1::EVENT_TYPE_UNSPECIFIED;
}

void to_message(const baas_event &in, baas::v1::Event *out)
{
    out->set_seq(in.seq);
    out->set_time_ns(in.time_ns);
    out->set_type(event_type(in.type));
    to_message(in.key, out->mutable_drb());
    out->set_sn(in.sn);
    out->set_count(in.count);
}

void apply(const baas::v1::ConfigUpdate &update, baas_config *config)
{
    if (update.has_t_poll_retransmit_ms())
        config->t_poll_retransmit_ms = update.t_poll_retransmit_ms();
    if (update.has_max_retx_threshold())
        config->max_retx_threshold = update.max_retx_threshold();
    if (update.has_drb_max_pdus())
        config->drb_max_pdus = update.drb_max_pdus();
    if (update.has_max_pdus())
        config->max_pdus = update.max_pdus();
}

}  // namespace baas_grpc

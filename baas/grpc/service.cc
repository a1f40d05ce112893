#include "service.h"

#include <algorithm>
#include <vector>

#include <baas/api.h>

#include "messages.h"
#include "status.h"

namespace baas_grpc {

using grpc::StatusCode;

grpc::Status Service::GetStats(grpc::ServerContext *, const baas::v1::StatsRequest *request,
                               baas::v1::StatsResponse *response)
{
    if (!request->has_drb()) {
        baas_global_info info{};
        grpc::Status status = from_errno(baas_api_global(&info), nullptr);
        if (status.ok())
            to_message(info, response->mutable_global_stats());
        return status;
    }
    baas_drb_key key;
    grpc::Status status = drb_key(request->drb(), &key);
    if (!status.ok())
        return status;
    baas_drb_info info{};
    status = from_errno(baas_api_drb(&key, &info), &key);
    if (status.ok())
        to_message(info, response->mutable_drb());
    return status;
}

static int collect_drb(const baas_drb_info *info, void *arg)
{
    static_cast<std::vector<baas_drb_info> *>(arg)->push_back(*info);
    return 0;
}

grpc::Status Service::ListDrbs(grpc::ServerContext *, const baas::v1::ListDrbsRequest *,
                               grpc::ServerWriter<baas::v1::ListDrbsResponse> *writer)
{
    // copied first, sent afterwards: the API's callback may run while the
    // lcores wait for the list to be taken, and a slow client must not
    // hold them
    std::vector<baas_drb_info> drbs;
    grpc::Status status = from_errno(baas_api_list_drbs(collect_drb, &drbs), nullptr);
    if (!status.ok())
        return status;
    for (size_t first = 0; first < drbs.size(); first += kDrbsPerResponse) {
        baas::v1::ListDrbsResponse response;
        size_t end = std::min(drbs.size(), first + kDrbsPerResponse);
        for (size_t i = first; i < end; i++)
            to_message(drbs[i], response.add_drbs());
        if (!writer->Write(response))
            return grpc::Status(StatusCode::CANCELLED, "the client went away");
    }
    return grpc::Status::OK;
}

grpc::Status Service::ListSns(grpc::ServerContext *, const baas::v1::ListSnsRequest *request,
                              baas::v1::ListSnsResponse *response)
{
    baas_drb_key key;
    grpc::Status status = drb_key(request->drb(), &key);
    if (!status.ok())
        return status;
    uint32_t max = request->max() == 0 ? kMaxSns : std::min(request->max(), kMaxSns);
    // one more than asked: whether the DRB holds more
    std::vector<uint32_t> sns(static_cast<size_t>(max) + 1);
    size_t n = 0;
    status = from_errno(baas_api_list_sns(&key, sns.data(), sns.size(), &n), &key);
    if (!status.ok())
        return status;
    to_message(key, response->mutable_drb());
    response->set_truncated(n > max);
    n = std::min<size_t>(n, max);
    response->mutable_sns()->Reserve(static_cast<int>(n));
    for (size_t i = 0; i < n; i++)
        response->add_sns(sns[i]);
    return grpc::Status::OK;
}

// The request's optional DRB: *which points at key, or is nullptr without one.
template <class Request>
static grpc::Status optional_drb(const Request &request, baas_drb_key *key,
                                 const baas_drb_key **which)
{
    *which = nullptr;
    if (!request.has_drb())
        return grpc::Status::OK;
    grpc::Status status = drb_key(request.drb(), key);
    if (status.ok())
        *which = key;
    return status;
}

// A DRB's config has no global bound (max_pdus 0), whatever the BaaS
// answers for a DRB that follows the defaults: a read-modify-write of a
// DRB's config must not give it the defaults' max_pdus, which it refuses.
static baas_config drb_config(const baas_drb_key *key, baas_config config)
{
    if (key != nullptr)
        config.max_pdus = 0;
    return config;
}

grpc::Status Service::GetConfig(grpc::ServerContext *, const baas::v1::ConfigRequest *request,
                                baas::v1::ConfigResponse *response)
{
    baas_drb_key key;
    const baas_drb_key *which;
    grpc::Status given = optional_drb(*request, &key, &which);
    if (!given.ok())
        return given;
    if (which != nullptr)
        *response->mutable_drb() = request->drb();
    baas_config config{};
    grpc::Status status = from_errno(baas_api_get_config(which, &config), which);
    if (status.ok())
        to_message(drb_config(which, config), response->mutable_config());
    return status;
}

grpc::Status Service::SetConfig(grpc::ServerContext *, const baas::v1::SetConfigRequest *request,
                                baas::v1::ConfigResponse *response)
{
    baas_drb_key key;
    const baas_drb_key *which;
    grpc::Status given = optional_drb(*request, &key, &which);
    if (!given.ok())
        return given;
    if (which != nullptr)
        *response->mutable_drb() = request->drb();
    std::lock_guard<std::mutex> lock(set_config_);
    baas_config config{};
    grpc::Status status = from_errno(baas_api_get_config(which, &config), which);
    if (!status.ok())
        return status;
    config = drb_config(which, config);
    apply(request->config(), &config);
    status = from_errno(baas_api_set_config(which, &config), which);
    if (!status.ok())
        return status;
    // as the BaaS has it now
    status = from_errno(baas_api_get_config(which, &config), which);
    if (status.ok())
        to_message(drb_config(which, config), response->mutable_config());
    return status;
}

grpc::Status Service::Flush(grpc::ServerContext *, const baas::v1::FlushRequest *request,
                            baas::v1::FlushResponse *response)
{
    if (request->has_drb() == request->all())
        return grpc::Status(StatusCode::INVALID_ARGUMENT,
                            request->all() ? "a flush names a DRB or all, not both"
                                           : "a flush names a DRB or all");
    baas_drb_key key;
    const baas_drb_key *which;
    grpc::Status given = optional_drb(*request, &key, &which);
    if (!given.ok())
        return given;
    uint64_t released = 0;
    grpc::Status status = from_errno(baas_api_flush(which, &released), which);
    if (status.ok())
        response->set_released(released);
    return status;
}

}  // namespace baas_grpc

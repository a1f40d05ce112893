// Holds the control API's mutex for a scope: one acquisition for a batch
// of writes (no other client's write in the middle of it), or for one
// chunk of a read.
#ifndef T4P4S_P4RT_CONTROL_BATCH_H
#define T4P4S_P4RT_CONTROL_BATCH_H

#include <t4p4s/control_api.h>

namespace t4p4s_p4rt {

class ControlBatch {
public:
    ControlBatch() { t4p4s_ctl_batch_begin(); }
    ~ControlBatch() { t4p4s_ctl_batch_end(); }
    ControlBatch(const ControlBatch &) = delete;
    ControlBatch &operator=(const ControlBatch &) = delete;
};

}  // namespace t4p4s_p4rt

#endif

// What TensorList kernels report about themselves, for tests.
#pragma once
#include <cstdint>

namespace kiln::ops {

// How many list updates (TensorListSetItem, TensorListPushBack) changed their input list in
// place rather than copying it (kUpdatesInput), since the process started.
int64_t list_updates_in_place();

}  // namespace kiln::ops

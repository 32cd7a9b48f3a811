// What TensorList kernels report about themselves, for tests; and a loop's row partitions
// of its lists (exec/loop_rows.h).
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor_impl.h"

namespace kiln::ops {

// How many list updates (TensorListSetItem, TensorListPushBack) changed their input list in
// place rather than copying it (kUpdatesInput), since the process started.
int64_t list_updates_in_place();

// The batch of list tensor `t`: the axis-0 size its set items share (-1 when none is set).
// False when `t` holds no list, an item is a scalar, items' axis 0 differ, or the list's
// element shape fixes axis 0 (a partition's items could not be set or read).
bool list_batch(const detail::TensorImpl& t, int64_t* batch);
// Rows [first, first + count) of `t` (rank >= 1, a value dtype): a view sharing its buffer
// where kiln owns it, else a copy.
Tensor rows_of(const detail::TensorImpl& t, int64_t first, int64_t count);
// A new list whose items are rows [first, first + count) of list tensor `t`'s items.
Tensor list_rows(const detail::TensorImpl& t, int64_t first, int64_t count);
// Row partitions put back in order: tensors concatenated along axis 0; lists item by item
// (an item unset in every partition stays unset). InternalError when they do not line up.
Tensor stitch_rows(const std::vector<const detail::TensorImpl*>& parts);
Tensor stitch_lists(const std::vector<const detail::TensorImpl*>& parts);

}  // namespace kiln::ops

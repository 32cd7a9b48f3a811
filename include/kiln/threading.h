// How many threads share one big kernel: TensorFlow's intra-op parallelism setting
// (tf.config.threading.set_intra_op_parallelism_threads).
#pragma once

namespace kiln::config {

// n > 0: at most n threads (the calling one included) split a kernel; 1 runs every kernel
// on the calling thread. n <= 0: the default, one per CPU this process may run on (its
// affinity mask). More than that default is capped to it. Unlike TensorFlow, it may be
// changed at any time; it applies to kernels started afterwards.
void set_intra_op_parallelism_threads(int n);
// The value last set (0 when never set), as TensorFlow reports it.
int get_intra_op_parallelism_threads();

}  // namespace kiln::config

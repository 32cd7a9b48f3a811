// How many threads share one big kernel, and how many independent steps run side by side:
// TensorFlow's intra-op and inter-op parallelism settings (tf.config.threading).
#pragma once

namespace kiln::config {

// n > 0: at most n threads (the calling one included) split a kernel; 1 runs every kernel
// on the calling thread. n <= 0: the default, one per CPU this process may run on (its
// affinity mask). More than that default is capped to it. Unlike TensorFlow, it may be
// changed at any time; it applies to kernels started afterwards.
void set_intra_op_parallelism_threads(int n);
// The value last set (0 when never set), as TensorFlow reports it.
int get_intra_op_parallelism_threads();

// How many independent steps of a function may run side by side (TensorFlow's inter-op
// parallelism). n == 1: never; each step runs alone with the intra-op threads. n > 1: at
// most n at once, the calling thread included (they come from the intra-op threads' pool,
// so at most that many). n <= 0: the default, as many as the intra-op threads. kiln runs a
// function's steps side by side only where its plan found independent branches of steps too
// small to split well (docs/performance.md); elsewhere the setting changes nothing. Like the
// intra-op setting, it may be changed at any time and applies to calls started afterwards.
void set_inter_op_parallelism_threads(int n);
// The value last set (0 when never set).
int get_inter_op_parallelism_threads();

}  // namespace kiln::config

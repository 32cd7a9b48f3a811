"""A Horovod training script, run by kiln: `import kiln as tf` and `import kiln.distribute as
hvd` are the only changes from TensorFlow + Horovod.

    mpirun -np 2 python examples/train_mlp_distributed.py [steps]

Each rank trains on its shard of every batch; DistributedGradientTape averages the gradients
over the ranks (one fused allreduce per step) inside the traced step; broadcast_variables makes
the initial weights equal. Rank 0 prints the loss of the whole batch."""
import sys

import numpy as np

import kiln as tf
import kiln.distribute as hvd

hvd.init()
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
rng = np.random.default_rng(0)
teacher = rng.standard_normal((20, 4)).astype(np.float32)
x_all = rng.standard_normal((256, 20)).astype(np.float32)
y_all = np.argmax(x_all @ teacher, axis=1).astype(np.int32)
# This rank's rows of the batch.
x = tf.constant(x_all[hvd.rank()::hvd.size()])
y = tf.constant(y_all[hvd.rank()::hvd.size()])

init = np.random.default_rng(1 + hvd.rank())  # different until the broadcast
w1 = tf.Variable(init.standard_normal((20, 32)).astype(np.float32) * 0.3, name="w1")
b1 = tf.Variable(np.zeros(32, np.float32), name="b1")
w2 = tf.Variable(init.standard_normal((32, 4)).astype(np.float32) * 0.3, name="w2")
variables = [w1, b1, w2]
hvd.broadcast_variables(variables, root_rank=0)
lr = 0.5


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    tape = hvd.DistributedGradientTape(tape)
    for v, g in zip(variables, tape.gradient(loss, variables)):
        v.assign_sub(lr * g)
    return hvd.allreduce(loss)


losses = [float(train_step(x, y)) for _ in range(steps)]
if hvd.rank() == 0:
    for s in range(0, steps, max(1, steps // 10)):
        print("step %4d  loss %.6f" % (s, losses[s]))
    print("ranks %d: loss %.4f -> %.4f" % (hvd.size(), losses[0], losses[-1]))
if not losses[-1] < losses[0]:
    sys.exit(1)

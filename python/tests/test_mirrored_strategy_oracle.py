"""tf.distribute.MirroredStrategy over logical CPUs, run by kiln and by TensorFlow: each program
runs in a fresh process per library (logical devices are set before a runtime starts) and both
must print the same text once `kiln.` reads as `tf.`."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("tensorflow")

_HEADER = """
import sys
if sys.argv[1] == "tensorflow":
    import tensorflow as tf
else:
    import kiln as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 3)
"""


def _run(program, library, cwd):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.pathsep.join(
        [os.path.join(os.path.dirname(__file__), "..")] + [p for p in os.environ.get("PYTHONPATH", "").split(
            os.pathsep) if p]))
    done = subprocess.run([sys.executable, "-c", _HEADER + textwrap.dedent(program), library], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _same(program, tmp_path):
    (tmp_path / "kiln").mkdir()
    (tmp_path / "tensorflow").mkdir()
    ours = _run(program, "kiln", tmp_path / "kiln").replace("kiln.", "tf.")
    theirs = _run(program, "tensorflow", tmp_path / "tensorflow")
    assert ours == theirs
    return ours


def test_run_reduce_and_mirrored_variables(tmp_path):
    out = _same("""
        print(len(tf.config.list_logical_devices("CPU")))
        s = tf.distribute.MirroredStrategy(["CPU:0", "/device:CPU:1", "cpu:2"])
        print(s.num_replicas_in_sync, tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context())
        with s.scope():
            v = tf.Variable(1.0)
            print(tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context(),
                  tf.distribute.get_replica_context())
            print(v)

        def step(x):
            ctx = tf.distribute.get_replica_context()
            return x * tf.cast(ctx.replica_id_in_sync_group + 1, tf.float32) + v

        r = s.run(step, args=(tf.constant([1.0, 2.0]),))
        print(r)
        print(s.reduce(tf.distribute.ReduceOp.SUM, r, axis=None))
        print(s.reduce(tf.distribute.ReduceOp.MEAN, r, axis=0))
        print(s.reduce("SUM", r, axis=0))
        print(s.experimental_local_results(r))
        with s.scope():
            v.assign(5.0)
        print(s.experimental_local_results(v))
        print(s.run(lambda: v.read_value()))
        print(s.run(lambda: (tf.constant(1), {"a": tf.constant(2.0)})))
        print(s.run(lambda x: x * 2, args=(r,)))
        print(tf.distribute.get_replica_context().replica_id_in_sync_group)
        """, tmp_path)
    assert "PerReplica:{" in out and "MirroredVariable:{" in out


def test_the_random_numbers_guides_generators_per_replica(tmp_path):
    _same("""
        g = tf.random.Generator.from_seed(1)
        strat = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1"])
        with strat.scope():
            results = strat.run(lambda: print(g.normal([])))  # made outside: one stream
        with strat.scope():
            g = tf.random.Generator.from_seed(1)  # made inside: a stream per replica
            print(strat.run(lambda: g.normal([])))
            print(strat.run(lambda: g.normal([2])))
            cp = tf.train.Checkpoint(my_generator=g)
            cp.write("./checkpoint")
            print(strat.run(lambda: g.normal([])))
        strat2 = tf.distribute.MirroredStrategy(devices=["cpu:0", "cpu:1", "cpu:2"])
        with strat2.scope():
            g2 = tf.random.Generator.from_seed(1)
            cp2 = tf.train.Checkpoint(my_generator=g2)
            cp2.restore("./checkpoint")
            print(strat2.run(lambda: g2.normal([])))
            print(g2.state)
            print(g2.normal([]))  # the cross-replica context: no replica's stream
            print(strat2.run(lambda: g2.normal([])))

        class MyModule(tf.Module):
            def __init__(self):
                super().__init__()
                self.g = tf.random.Generator.from_seed(0)

            @tf.function
            def __call__(self):
                return self.g.normal([])

            @tf.function
            def state(self):
                return self.g.state

        with strat.scope():
            m = MyModule()
            print(strat.run(m))
            print("state:", m.state())
            tf.saved_model.save(m, "./saved_model")
            print(strat.run(m))
            print("state:", m.state())
        loaded = tf.saved_model.load("./saved_model")
        print("state:", loaded.state())
        print(loaded())
        print("state:", loaded.state())
        """, tmp_path)


def test_bad_devices_and_unsupported_calls():
    import kiln

    with pytest.raises(ValueError, match="does not exist"):
        kiln.distribute.MirroredStrategy(["CPU:0", "CPU:7"])
    with pytest.raises(ValueError, match="not a valid device"):
        kiln.distribute.MirroredStrategy(["nonsense"])
    with pytest.raises(ValueError, match="duplicates"):
        kiln.distribute.MirroredStrategy(["CPU:0", "/device:CPU:0"])
    s = kiln.distribute.MirroredStrategy()
    assert s.num_replicas_in_sync == 1
    assert s.run(lambda: kiln.constant(3)).numpy() == 3  # one replica: the value itself
    with pytest.raises(NotImplementedError, match="all_reduce"):
        s.run(lambda: kiln.distribute.get_replica_context().all_reduce("SUM", kiln.constant(1.0)))
    with pytest.raises(NotImplementedError, match="tf.data"):
        s.experimental_distribute_dataset([1, 2])
    with pytest.raises(TypeError, match="LogicalDeviceConfiguration"):
        kiln.config.set_logical_device_configuration(kiln.config.list_physical_devices("CPU")[0], [1])

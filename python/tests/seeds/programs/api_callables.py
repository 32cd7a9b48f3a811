# kiln.function over a callable object and over *args/**kwargs; a concrete function's graph and signature.
class Scale:
    def __init__(self, k): self.k = k
    def __call__(self, x): return x * self.k
f = tf.function(Scale(3.0))
print(f(tf.constant(2.0)), f.experimental_get_tracing_count())
cf = f.get_concrete_function(tf.TensorSpec([], tf.float32))
gd = cf.graph.as_graph_def()
print(len(gd.SerializeToString()) > 0, "Placeholder" in str(gd))
print(cf.pretty_printed_signature())
g = tf.function(lambda x, *rest, k=1, **kw: x * k + len(rest) + len(kw))
print(g(tf.constant(1), 2, 3, k=2, z=5))

# The guide: AutoGraph turns `if` on a tensor into a conditional in the graph.
def simple_relu(x):
    if tf.greater(x, 0):
        return x
    else:
        return 0


tf_simple_relu = tf.function(simple_relu)
print("First branch, with graph:", tf_simple_relu(tf.constant(1)).numpy())
print("Second branch, with graph:", tf_simple_relu(tf.constant(-1)).numpy())
print("Eager:", simple_relu(tf.constant(1)).numpy(), simple_relu(tf.constant(-1)))
cf = tf_simple_relu.get_concrete_function(tf.constant(1))
print(cf.structured_input_signature)
print([op.type for op in cf.graph.get_operations()][:1], cf.outputs[0].dtype.name, cf.outputs[0].shape)

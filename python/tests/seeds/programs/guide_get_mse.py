# The guide: run_functions_eagerly, and Python print as a tracing-time side effect.
@tf.function
def get_MSE(y_true, y_pred):
    print("Calculating MSE!")
    sq_diff = tf.pow(y_true - y_pred, 2)
    return tf.reduce_mean(sq_diff)


y_true = tf.constant([1, 0, 4, 4, 7])
y_pred = tf.constant([3, 6, 3, 0, 6])
print(get_MSE(y_true, y_pred))
error = get_MSE(y_true, y_pred)
error = get_MSE(y_true, y_pred)
tf.config.run_functions_eagerly(True)
error = get_MSE(y_true, y_pred)
error = get_MSE(y_true, y_pred)
print(error)
tf.config.run_functions_eagerly(False)
error = get_MSE(y_true, y_pred)
print(get_MSE.experimental_get_tracing_count())

# The guide: Python side effects run while tracing only; Python arguments retrace per value.
@tf.function
def a_function_with_python_side_effect(x):
    print("Tracing!")
    return x * x + tf.constant(2)


print(a_function_with_python_side_effect(tf.constant(2)))
print(a_function_with_python_side_effect(tf.constant(3)))
print(a_function_with_python_side_effect(2))
print(a_function_with_python_side_effect(3))
print(a_function_with_python_side_effect(2))
print(a_function_with_python_side_effect.experimental_get_tracing_count())

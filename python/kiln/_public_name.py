"""The name reprs give the library: "kiln", or "tf" once kiln.install_as_tensorflow() has run, so that
an unchanged TensorFlow program prints what it prints under TensorFlow."""

prefix = "kiln"


def set_prefix(name):
    global prefix
    prefix = name

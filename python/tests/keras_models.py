"""Small Keras models the tests export with `model.export` (TensorFlow writes them)."""


def small_mlp(keras):
    """8 inputs, Dense 16 relu, Dense 3 softmax."""
    return keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(3, activation="softmax")])


def small_cnn(keras, activation="relu"):
    """12x12x3 images: Conv2D (SAME, `activation`), MaxPooling2D, BatchNormalization, a strided
    VALID Conv2D, AveragePooling2D (SAME), Dropout, Flatten, Dense softmax."""
    layers = keras.layers
    return keras.Sequential([
        keras.Input((12, 12, 3)),
        layers.Conv2D(4, 3, padding="same", activation=activation),
        layers.MaxPooling2D(2),
        layers.BatchNormalization(),
        layers.Conv2D(5, 3, strides=2, padding="valid"),
        layers.AveragePooling2D(2, padding="same"),
        layers.Dropout(0.3),
        layers.Flatten(),
        layers.Dense(3, activation="softmax"),
    ])

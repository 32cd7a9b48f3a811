"""tf.io.decode_csv, tf.data.experimental.CsvDataset and make_csv_dataset against TensorFlow's:
values, dtypes, quoting, defaults, na_value, select_cols, inferred column types, and the error
classes of malformed records."""
import numpy as np
import pytest

import kiln

tf = pytest.importorskip("tensorflow")

DECODES = [
    lambda m: m.io.decode_csv(["1,2.5,a", "3,4,b"], [[0], [0.0], [""]]),
    lambda m: m.io.decode_csv(["1,,x", ",7,"], [[9], [8.0], ["dflt"]]),
    lambda m: m.io.decode_csv(['"a,b",1', '"say ""hi""",2'], [[""], [0]]),
    lambda m: m.io.decode_csv(["NA,1", "2,NA"], [[-1], [-2]], na_value="NA"),
    lambda m: m.io.decode_csv(["1;2;3"], [[0], [0]], field_delim=";", select_cols=[0, 2]),
    lambda m: m.io.decode_csv([["1,2", "3,4"], ["5,6", "7,8"]], [m.constant([0], m.int64), [0.0]]),
    lambda m: m.io.decode_csv("1.5e3,-2", [m.constant([0], m.float64), m.constant([0], m.int64)]),
    # bad records
    lambda m: m.io.decode_csv(["1,2"], [[0], [0], [0]]),
    lambda m: m.io.decode_csv(["x,2"], [[0], [0]]),
    lambda m: m.io.decode_csv([",2"], [m.constant([], m.int32), [0]]),
    lambda m: m.io.decode_csv([",2"], [m.int32, [0]]),
    lambda m: m.io.decode_csv(['"abc,1'], [[""], [0]]),
    lambda m: m.io.decode_csv(['ab"c,1'], [[""], [0]]),
    lambda m: m.io.decode_csv(["99999999999,1"], [[0], [0]]),
    lambda m: m.io.decode_csv(["1,2"], [[0], [0]], field_delim=";;"),
]


@pytest.mark.parametrize("case", range(len(DECODES)))
def test_decode_csv_is_tensorflows(oracle, case):
    oracle(DECODES[case], where="decode %d" % case)


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("id,score,name,flag\n1,0.5,ann,1\n2,1.5,bob,0\n3,,\"c, d\",1\n4,2.25,eve,0\n5,3,fay,1\n")
    return str(path)


def test_csv_dataset_is_tensorflows(csv_file):
    def run(m):
        ds = m.data.experimental.CsvDataset(csv_file, [[0], [0.0], [""], [0]], header=True)
        return [tuple(np.asarray(t.numpy()).tolist() for t in row) for row in ds]

    assert run(kiln) == run(tf)

    def selected(m):
        ds = m.data.experimental.CsvDataset(csv_file, [[0.0], [""]], header=True, select_cols=[1, 2])
        return [tuple(np.asarray(t.numpy()).tolist() for t in row) for row in ds]

    assert selected(kiln) == selected(tf)


def test_make_csv_dataset_is_tensorflows(csv_file):
    def run(m, **kw):
        ds = m.data.experimental.make_csv_dataset(csv_file, batch_size=2, shuffle=False, num_epochs=1, **kw)
        out = []
        for element in ds:
            features, label = element if isinstance(element, tuple) else (element, None)
            out.append(([(k, v.dtype.name, np.asarray(v.numpy()).tolist()) for k, v in features.items()],
                        None if label is None else np.asarray(label.numpy()).tolist()))
        return out

    assert run(kiln, label_name="flag") == run(tf, label_name="flag")
    assert run(kiln, select_columns=["id", "name"]) == run(tf, select_columns=["id", "name"])
    assert run(kiln) == run(tf)


def test_a_csv_map_runs_in_a_traced_pipeline():
    lines = ["1,2", "3,4", "5,6"]

    def run(m):
        ds = m.data.Dataset.from_tensor_slices(lines).batch(2).map(lambda b: m.io.decode_csv(b, [[0], [0]]))
        return [[t.numpy().tolist() for t in row] for row in ds]

    assert run(kiln) == run(tf)

"""Writes tests/fixtures/predict/: small ONNX inputs for the predict tests.
  unknown_op.onnx  Conv -> NotARealOp (default domain) -> com.example.Fancy -> Relu
  corrupt.onnx     bytes that are not a protobuf model
  cnn_dyn.onnx     a 3-layer CNN with a symbolic batch and a symbolic
                   'size' for height and width (to test unbound dims)
Run with /usr/bin/python3 (onnx 1.12)."""
import os
import onnx
from onnx import helper, TensorProto

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "predict")
os.makedirs(HERE, exist_ok=True)

def w(name, dims):
    import numpy as np
    return helper.make_tensor(name, TensorProto.FLOAT, dims, np.zeros(dims, "float32").ravel().tolist())

x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])
y = helper.make_tensor_value_info("output", TensorProto.FLOAT, None)
nodes = [
    helper.make_node("Conv", ["input", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("NotARealOp", ["c1"], ["u1"]),
    helper.make_node("Fancy", ["u1"], ["u2"], domain="com.example"),
    helper.make_node("Relu", ["u2"], ["output"]),
]
g = helper.make_graph(nodes, "unknown_op", [x], [y], [w("w1", [8, 3, 3, 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
onnx.save(m, os.path.join(HERE, "unknown_op.onnx"))

with open(os.path.join(HERE, "corrupt.onnx"), "wb") as f:
    f.write(b"\x08\x07\x12\xff\xff\xff\xff\x0fnot an onnx model at all" * 3)

x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, "size", "size"])
nodes = [
    helper.make_node("Conv", ["input", "w1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"]),
    helper.make_node("GlobalAveragePool", ["r2"], ["output"]),
]
g = helper.make_graph(nodes, "cnn_dyn", [x], [y], [w("w1", [8, 3, 3, 3]), w("w2", [8, 8, 3, 3])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(HERE, "cnn_dyn.onnx"))
print("wrote", HERE)

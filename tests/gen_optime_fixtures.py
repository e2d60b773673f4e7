"""Writes tests/fixtures/optime/optime_ops.onnx for tests/test_optime.c
(run with /usr/bin/python3; needs the onnx package): the nodes the
operator-time model times, one of each form, with a dynamic batch:

  x [B, 16, 32, 32] -> Conv 3x3 pad 1 to 32 channels (dense)
    -> Conv 5x5 stride 2 pad 2, group 32 (depthwise)        [B, 32, 16, 16]
    -> Conv 1x1, group 4, to 64 channels (grouped)          [B, 64, 16, 16]
    -> Reshape [B, 64, 256] -> Transpose [B, 256, 64]
    -> MatMul by a [64, 48] weight (a Linear: one GEMM)     [B, 256, 48]
    -> Reshape [B, 256, 4, 12] -> Transpose [B, 4, 256, 12] = q
    q x Transpose(q) [B, 4, 12, 256] (a batched product)     [B, 4, 256, 256]
    -> ReduceMean over the last two axes [B, 4] -> Flatten [B, 4]
    -> Gemm by a [10, 4] weight, transB (a Linear)           [B, 10]

onnx's shape inference checks every shape the test expects, so the file
is also checked against an implementation other than ours.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "optime")


def init(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def const64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def main():
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], name="conv_dense"),
        helper.make_node("Conv", ["c1", "w2"], ["c2"], kernel_shape=[5, 5],
                         strides=[2, 2], pads=[2, 2, 2, 2], group=32,
                         name="conv_dw"),
        helper.make_node("Conv", ["c2", "w3"], ["c3"], kernel_shape=[1, 1],
                         group=4, name="conv_group"),
        helper.make_node("Reshape", ["c3", "s1"], ["r1"], name="flat"),
        helper.make_node("Transpose", ["r1"], ["t1"], perm=[0, 2, 1], name="tok"),
        helper.make_node("MatMul", ["t1", "w4"], ["m1"], name="linear"),
        helper.make_node("Reshape", ["m1", "s2"], ["r2"], name="heads"),
        helper.make_node("Transpose", ["r2"], ["q"], perm=[0, 2, 1, 3], name="qperm"),
        helper.make_node("Transpose", ["q"], ["kt"], perm=[0, 1, 3, 2], name="kperm"),
        helper.make_node("MatMul", ["q", "kt"], ["sc"], name="scores"),
        helper.make_node("ReduceMean", ["sc"], ["rm"], axes=[2, 3], keepdims=0,
                         name="pool"),
        helper.make_node("Gemm", ["rm", "w5"], ["y"], transB=1, name="head"),
    ]
    inits = [init("w1", [32, 16, 3, 3]), init("w2", [32, 1, 5, 5]),
             init("w3", [64, 8, 1, 1]), init("w4", [64, 48]),
             init("w5", [10, 4]),
             const64("s1", [0, 64, 256]), const64("s2", [0, 256, 4, 12])]
    g = helper.make_graph(
        nodes, "optime_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    dims = {v.name: [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim]
            for v in inferred.graph.value_info}
    assert dims["c2"] == ["batch", 32, 16, 16], dims["c2"]
    assert dims["c3"] == ["batch", 64, 16, 16], dims["c3"]
    assert dims["sc"] == ["batch", 4, 256, 256], dims["sc"]
    onnx.checker.check_model(m)
    os.makedirs(HERE, exist_ok=True)
    onnx.save(m, os.path.join(HERE, "optime_ops.onnx"))


if __name__ == "__main__":
    main()

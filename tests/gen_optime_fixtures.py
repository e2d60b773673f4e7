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

and tests/fixtures/optime/memop_ops.onnx, the memory-bound nodes, batch
dynamic:

  x [B, 8, 16, 16] -> BatchNormalization -> Relu
    -> MaxPool 3x3 stride 2 pad 1                          [B, 8, 8, 8]
    -> Mul by a [1, 8, 1, 1] scale (per channel)
    -> GlobalAveragePool [B, 8, 1, 1] -> Flatten            [B, 8] = f
  t [B, 32, 64] -> LayerNormalization (last axis)
    -> Sigmoid, Mul by it (same shape)
    -> Add a [64] bias (along the rows) -> Mul by a scalar
    -> InstanceNormalization (32 channels of 64)
    -> Softmax (last axis)                                  [B, 32, 64] = u

and tests/fixtures/optime/copy_ops.onnx, layout copies (a Reshape or
Flatten of a Transpose's output copies in PyTorch), batch dynamic:

  x [B, 8, 16, 32] -> Transpose (0, 2, 1, 3) -> Reshape [B, 16, 256] = y1
                      (rows of 32 moved whole)
  x -> Transpose (0, 2, 3, 1) -> Flatten (axis 1) [B, 4096]        = y2
                      (the last dim moved: a true transpose)
  x -> Reshape [B, 8, 512] (a view, no copy)                        = y3

and tests/fixtures/optime/resize_ops.onnx, interpolations (fifty-fourth
session), batch dynamic, each a Resize by constant scales:

  x [B, 16, 7, 7] -> linear, half-pixel, x2            [B, 16, 14, 14]
    -> linear, align_corners, x2                        [B, 16, 28, 28]
    -> nearest, x2                                      [B, 16, 56, 56]
    -> cubic, x0.5                                      [B, 16, 28, 28]
    -> linear, x1 (the same size: PyTorch copies)        [B, 16, 28, 28] = y

and tests/fixtures/optime/resize_layout.onnx, the layouts a Resize reads:

  t [B, 196, 16] -> Transpose (0, 2, 1) -> Reshape [B, 16, 14, 14]
    (a channels-last view: CoaT's tokens as an image) -> Resize x2 = y1
  q [B, 2, 196, 8] -> Transpose (0, 1, 3, 2) -> Reshape [B, 16, 14, 14]
    (no view exists: a contiguous copy, EfficientFormerV2's) -> Resize = y2

and tests/fixtures/optime/conv_layout.onnx, the layouts a convolution
reads and passes on:

  t [B, 196, 16] -> Transpose (0, 2, 1) -> Reshape [B, 16, 14, 14]
    (a channels-last view, a LayerNorm2d's) -> Conv depthwise 3x3 -> d1
    -> BatchNormalization -> b1 -> Mul (scalar s, b1) (StarReLU's scale
    first) -> m1 -> Conv 1x1 16 -> 32 = y1: all channels-last
  x [B, 16, 14, 14] (NCHW) -> Conv depthwise 3x3 -> Conv 1x1 = y2: NCHW

onnx's shape inference checks every shape the test expects, so the files
are also checked against an implementation other than ours.
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


def model_and_dims(g):
    """The opset-17 model of graph g and its value shapes as onnx's strict
    shape inference gives them."""
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    return m, {v.name: [d.dim_value or d.dim_param for d in v.type.tensor_type.shape.dim]
               for v in inferred.graph.value_info}


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
    m, dims = model_and_dims(g)
    assert dims["c2"] == ["batch", 32, 16, 16], dims["c2"]
    assert dims["c3"] == ["batch", 64, 16, 16], dims["c3"]
    assert dims["sc"] == ["batch", 4, 256, 256], dims["sc"]
    onnx.checker.check_model(m)
    os.makedirs(HERE, exist_ok=True)
    onnx.save(m, os.path.join(HERE, "optime_ops.onnx"))
    memops()


def memops():
    f32 = np.float32
    nodes = [
        helper.make_node("BatchNormalization", ["x", "bn_s", "bn_b", "bn_m", "bn_v"],
                         ["b1"], name="bn"),
        helper.make_node("Relu", ["b1"], ["a1"], name="relu"),
        helper.make_node("MaxPool", ["a1"], ["p1"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1], name="maxpool"),
        helper.make_node("Mul", ["p1", "chs"], ["m1"], name="chan_scale"),
        helper.make_node("GlobalAveragePool", ["m1"], ["g1"], name="gap"),
        helper.make_node("Flatten", ["g1"], ["f"], name="flat"),
        helper.make_node("LayerNormalization", ["t", "ln_s", "ln_b"], ["l1"],
                         axis=-1, name="ln"),
        helper.make_node("Sigmoid", ["l1"], ["s1"], name="sigmoid"),
        helper.make_node("Mul", ["l1", "s1"], ["w1"], name="swish_mul"),
        helper.make_node("Add", ["w1", "rowb"], ["w2"], name="row_bias"),
        helper.make_node("Mul", ["w2", "half"], ["w3"], name="scalar_mul"),
        helper.make_node("InstanceNormalization", ["w3", "in_s", "in_b"], ["w4"],
                         name="instnorm"),
        helper.make_node("Softmax", ["w4"], ["u"], axis=-1, name="softmax"),
    ]
    inits = [numpy_helper.from_array(np.ones(n, f32), name) for name, n in
             (("bn_s", 8), ("bn_b", 8), ("bn_m", 8), ("bn_v", 8),
              ("ln_s", 64), ("ln_b", 64), ("rowb", 64), ("in_s", 32), ("in_b", 32))]
    inits += [numpy_helper.from_array(np.ones((1, 8, 1, 1), f32), "chs"),
              numpy_helper.from_array(np.array(0.5, f32), "half")]
    g = helper.make_graph(
        nodes, "memop_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 16, 16]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, ["batch", 32, 64])],
        [helper.make_tensor_value_info("f", TensorProto.FLOAT, ["batch", 8]),
         helper.make_tensor_value_info("u", TensorProto.FLOAT, ["batch", 32, 64])],
        inits)
    m, dims = model_and_dims(g)
    assert dims["p1"] == ["batch", 8, 8, 8], dims["p1"]
    assert dims["g1"] == ["batch", 8, 1, 1], dims["g1"]
    assert dims["w3"] == ["batch", 32, 64], dims["w3"]
    assert dims["w4"] == ["batch", 32, 64], dims["w4"]
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "memop_ops.onnx"))
    copyops()


def copyops():
    nodes = [
        helper.make_node("Transpose", ["x"], ["t1"], perm=[0, 2, 1, 3], name="t1"),
        helper.make_node("Reshape", ["t1", "s1"], ["y1"], name="rows_copy"),
        helper.make_node("Transpose", ["x"], ["t2"], perm=[0, 2, 3, 1], name="t2"),
        helper.make_node("Flatten", ["t2"], ["y2"], axis=1, name="transpose_copy"),
        helper.make_node("Reshape", ["x", "s3"], ["y3"], name="view"),
    ]
    g = helper.make_graph(
        nodes, "copy_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 16, 32])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, ["batch", 16, 256]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["batch", 4096]),
         helper.make_tensor_value_info("y3", TensorProto.FLOAT, ["batch", 8, 512])],
        [const64("s1", [0, 16, 256]), const64("s3", [0, 8, 512])])
    m, dims = model_and_dims(g)
    assert dims["t1"] == ["batch", 16, 8, 32], dims["t1"]
    assert dims["t2"] == ["batch", 16, 32, 8], dims["t2"]
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "copy_ops.onnx"))
    resizeops()


def resizeops():
    f32 = np.float32

    def resize(x, y, scale, name, **attrs):
        return helper.make_node("Resize", [x, "", "sc%g" % scale], [y], name=name,
                                **attrs)
    nodes = [
        resize("x", "r1", 2, "up_linear", mode="linear",
               coordinate_transformation_mode="half_pixel"),
        resize("r1", "r2", 2, "up_linear_ac", mode="linear",
               coordinate_transformation_mode="align_corners"),
        resize("r2", "r3", 2, "up_nearest", mode="nearest"),
        resize("r3", "r4", 0.5, "down_cubic", mode="cubic"),
        resize("r4", "y", 1, "same_linear", mode="linear"),
    ]
    inits = [numpy_helper.from_array(np.array([1, 1, s, s], f32), "sc%g" % s)
             for s in (2, 0.5, 1)]
    g = helper.make_graph(
        nodes, "resize_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16, 28, 28])],
        inits)
    m, dims = model_and_dims(g)
    for v, hw in (("r1", 14), ("r2", 28), ("r3", 56), ("r4", 28)):
        assert dims[v][1:] == [16, hw, hw], (v, dims[v])   # onnx loses "batch"
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "resize_ops.onnx"))
    resize_layout()


def resize_layout():
    f32 = np.float32
    nodes = [
        helper.make_node("Transpose", ["t"], ["tt"], perm=[0, 2, 1], name="tok_t"),
        helper.make_node("Reshape", ["tt", "s"], ["img1"], name="tok_img"),
        helper.make_node("Resize", ["img1", "", "sc"], ["y1"], mode="linear",
                         name="up_view"),
        helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 1, 3, 2], name="heads_t"),
        helper.make_node("Reshape", ["qt", "s"], ["img2"], name="heads_img"),
        helper.make_node("Resize", ["img2", "", "sc"], ["y2"], mode="linear",
                         name="up_copy"),
    ]
    inits = [numpy_helper.from_array(np.array([1, 1, 2, 2], f32), "sc"),
             const64("s", [-1, 16, 14, 14])]
    g = helper.make_graph(
        nodes, "resize_layout",
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, ["batch", 196, 16]),
         helper.make_tensor_value_info("q", TensorProto.FLOAT, ["batch", 2, 196, 8])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, ["batch", 16, 28, 28]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["batch", 16, 28, 28])],
        inits)
    m, dims = model_and_dims(g)
    assert dims["img1"][1:] == [16, 14, 14] and dims["img2"][1:] == [16, 14, 14], dims
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "resize_layout.onnx"))
    conv_layout()


def conv_layout():
    f32 = np.float32
    rng = np.random.default_rng(5)
    nodes = [
        helper.make_node("Transpose", ["t"], ["tt"], perm=[0, 2, 1], name="tok_t"),
        helper.make_node("Reshape", ["tt", "s"], ["img"], name="tok_img"),
        helper.make_node("Conv", ["img", "wd"], ["d1"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], group=16, name="dw_cl"),
        helper.make_node("BatchNormalization", ["d1", "g", "b", "mu", "var"],
                         ["b1"], name="bn_cl"),
        helper.make_node("Mul", ["k", "b1"], ["m1"], name="scale_cl"),
        helper.make_node("Conv", ["m1", "wp"], ["y1"], kernel_shape=[1, 1],
                         name="pw_cl"),
        helper.make_node("Conv", ["x", "wd"], ["d2"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], group=16, name="dw_nchw"),
        helper.make_node("Conv", ["d2", "wp"], ["y2"], kernel_shape=[1, 1],
                         name="pw_nchw"),
    ]
    inits = [const64("s", [-1, 16, 14, 14]),
             numpy_helper.from_array(rng.standard_normal((16, 1, 3, 3)).astype(f32), "wd"),
             numpy_helper.from_array(rng.standard_normal((32, 16, 1, 1)).astype(f32), "wp"),
             numpy_helper.from_array(np.array(0.8, f32), "k")]
    inits += [numpy_helper.from_array(np.full(16, v, f32), nm)
              for nm, v in (("g", 1), ("b", 0), ("mu", 0), ("var", 1))]
    g = helper.make_graph(
        nodes, "conv_layout",
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, ["batch", 196, 16]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, 14, 14])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, ["batch", 32, 14, 14]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["batch", 32, 14, 14])],
        inits)
    m, dims = model_and_dims(g)
    for v in ("d1", "b1", "m1", "d2"):
        assert dims[v][1:] == [16, 14, 14], (v, dims[v])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "conv_layout.onnx"))
    cls_layout()


def cls_layout():
    """Tokens after a class token is sliced off, viewed as an image
    (x[:, 1:].transpose(1, 2).reshape(B, C, H, W), CoaT's): N's stride is
    (HW + 1) C, not HW C, yet ATen calls the view channels-last (an order
    of strides), and its upsampling and convolution give channels-last
    outputs. A transpose of H and W is not channels-last. PyTorch (CPU,
    the same suggest_memory_format) is the oracle, asserted here."""
    import torch
    import torch.nn.functional as F
    t = torch.randn(2, 197, 16)
    img = t[:, 1:].transpose(1, 2).reshape(2, 16, 14, 14)
    cl = torch.channels_last
    assert not img.is_contiguous(memory_format=cl)
    assert F.interpolate(img, scale_factor=2.0, mode="bilinear").is_contiguous(memory_format=cl)
    assert F.conv2d(img, torch.randn(16, 1, 3, 3), padding=1, groups=16).is_contiguous(memory_format=cl)
    x = torch.randn(2, 16, 14, 14).transpose(2, 3)
    assert not F.interpolate(x, scale_factor=2.0, mode="bilinear").is_contiguous(memory_format=cl)
    f32 = np.float32
    rng = np.random.default_rng(6)
    nodes = [
        helper.make_node("Slice", ["t", "st", "en", "ax"], ["img_tok"], name="drop_cls"),
        helper.make_node("Transpose", ["img_tok"], ["tt"], perm=[0, 2, 1], name="tok_t"),
        helper.make_node("Reshape", ["tt", "s"], ["img"], name="tok_img"),
        helper.make_node("Resize", ["img", "", "sc"], ["y1"], mode="linear", name="up_cls"),
        helper.make_node("Conv", ["img", "wd"], ["y2"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], group=16, name="dw_cls"),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 1, 3, 2], name="hw_t"),
        helper.make_node("Resize", ["xt", "", "sc"], ["y3"], mode="linear", name="up_hw"),
    ]
    inits = [const64("st", [1]), const64("en", [1 << 62]), const64("ax", [1]),
             const64("s", [-1, 16, 14, 14]),
             numpy_helper.from_array(np.array([1, 1, 2, 2], f32), "sc"),
             numpy_helper.from_array(rng.standard_normal((16, 1, 3, 3)).astype(f32), "wd")]
    g = helper.make_graph(
        nodes, "cls_layout",
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, ["batch", 197, 16]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, 14, 14])],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, ["batch", 16, 28, 28]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["batch", 16, 14, 14]),
         helper.make_tensor_value_info("y3", TensorProto.FLOAT, ["batch", 16, 28, 28])],
        inits)
    m, dims = model_and_dims(g)
    assert dims["img"][1:] == [16, 14, 14], dims
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "cls_layout.onnx"))


if __name__ == "__main__":
    main()

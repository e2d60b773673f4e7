#!/usr/bin/python3
"""gen_op_fixtures.py — writes tests/fixtures/ops/: one tiny single-op ONNX
model per case (onnx.helper) and expected.json with the expected dtype and
shape of every node output. tests/test_shape.c checks dlp_shape_infer
against it.

Oracle: onnx 1.12's own shape inference (strict mode, data propagation).
Where it cannot infer a shape (data-dependent outputs, ops it does not
propagate through) or is known to differ from the runtime (MaxPool
ceil_mode with padding), the case carries an explicit expectation computed
by running the same op in PyTorch / numpy; expected.json records which
oracle gave each case. Cases marked 'fold' also record the expected
constant contents of output 0 (computed with numpy).

Also exports a tiny GPT-like transformer written here in torch (dynamic
axes batch/seq, opset 17, stripped per PROTOCOL.md) and records, from a
static export at batch 3 / seq 7 run through onnx shape inference, the
shapes of every tensor name the two exports share (tiny_gpt.json).

Run: /usr/bin/python3 tests/gen_op_fixtures.py   (deterministic output)
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "ops")

F32, I64, I32, BOOL, U8, F16 = T.FLOAT, T.INT64, T.INT32, T.BOOL, T.UINT8, T.FLOAT16
NP = {F32: np.float32, I64: np.int64, I32: np.int32, BOOL: np.bool_,
      U8: np.uint8, F16: np.float16, T.INT8: np.int8}


class I:
    """A graph input of a given shape (runtime data)."""
    def __init__(self, shape, dtype=F32):
        self.shape, self.dtype = list(shape), dtype


def C(values, dtype=None):
    """A constant input (initializer)."""
    a = np.array(values)
    if dtype is not None:
        a = a.astype(NP[dtype])
    elif a.dtype == np.float64:
        a = a.astype(np.float32)
    elif a.dtype.kind == "i":
        a = a.astype(np.int64)
    return a


CASES = []


def case(name, op, inputs, attrs=None, opset=17, n_out=1, expect=None,
         fold=None, domain="", nodes=None):
    """expect: list of (dtype, shape) overriding onnx inference; fold:
    expected contents of output 0 (list) for constant-folding cases."""
    CASES.append(dict(name=name, op=op, inputs=inputs, attrs=attrs or {},
                      opset=opset, n_out=n_out, expect=expect, fold=fold,
                      domain=domain, nodes=nodes))


def build(c):
    inits, vis, names = [], [], []
    for k, x in enumerate(c["inputs"]):
        if x is None:
            names.append("")
            continue
        nm = "in%d" % k
        names.append(nm)
        if isinstance(x, I):
            vis.append(h.make_tensor_value_info(nm, x.dtype, x.shape))
        else:
            inits.append(numpy_helper.from_array(x, nm))
    outs = ["out%d" % k for k in range(c["n_out"])]
    if c["nodes"]:
        nodes = c["nodes"](names, outs)
    else:
        nodes = [h.make_node(c["op"], names, outs, name="n0",
                             domain=c["domain"], **c["attrs"])]
    g = h.make_graph(nodes, c["name"], vis,
                     [onnx.ValueInfoProto(name=o) for o in outs],
                     initializer=inits)
    imports = [h.make_opsetid("", c["opset"])]
    if c["domain"]:
        imports.append(h.make_opsetid(c["domain"], 1))
    m = h.make_model(g, opset_imports=imports, producer_name="dlperf-tests")
    m.ir_version = 8
    return m


def infer(m):
    try:
        im = onnx.shape_inference.infer_shapes(m, strict_mode=True,
                                               data_prop=True)
    except Exception as e:  # noqa: BLE001 — reported by the caller
        return None, str(e)
    res = []
    for o in im.graph.output:
        tt = o.type.tensor_type
        if not tt.HasField("shape"):
            res.append((tt.elem_type, None))
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in tt.shape.dim]
        res.append((tt.elem_type, None if None in dims else dims))
    return res, None


# ---------------------------------------------------------------------------
# cases
X4 = I([2, 3, 8, 8])

# unary elementwise
for op in ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Relu",
           "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid",
           "HardSwish", "Tanh", "Erf", "Softplus", "Softsign", "Sin",
           "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Floor",
           "Ceil", "Round", "Sign", "ThresholdedRelu", "Shrink", "Identity",
           "Softmax", "LogSoftmax", "Hardmax", "LRN",
           "MeanVarianceNormalization", "LpNormalization"]:
    attrs = {"size": 3} if op == "LRN" else {}
    case("unary_" + op, op, [I([2, 5, 3, 4])], attrs, opset=18)
case("unary_Mish", "Mish", [I([2, 5, 3, 4])], opset=18,
     expect=[(F32, [2, 5, 3, 4])])
case("gelu_20", "Gelu", [I([2, 7])], opset=20, expect=[(F32, [2, 7])])
case("not", "Not", [I([3, 4], BOOL)])
case("isnan", "IsNaN", [I([3, 4])])
case("isinf", "IsInf", [I([3, 4])])
case("cast", "Cast", [I([3, 4])], {"to": I64})
case("castlike", "CastLike", [I([3, 4]), I([1], F16)], opset=15)
case("dropout", "Dropout", [I([3, 4])], n_out=2, opset=13)
case("clip_7", "Clip", [I([3, 4])], {"min": 0.0, "max": 6.0}, opset=7)
case("clip_13", "Clip", [I([3, 4]), C(0.0), C(6.0)], opset=13)
case("prelu", "PRelu", [I([2, 3, 4, 4]), I([3, 1, 1])])

# binary, broadcasting
for op in ["Add", "Sub", "Mul", "Div", "Pow"]:
    case("bin_" + op, op, [I([2, 1, 4]), I([3, 1])])
case("mod", "Mod", [I([2, 3], I64), I([3], I64)])
case("mod_fmod", "Mod", [I([2, 3]), I([1])], {"fmod": 1})
case("bitshift", "BitShift", [I([4], T.UINT32), I([4], T.UINT32)],
     {"direction": "LEFT"})
for op in ["And", "Or", "Xor"]:
    case("logic_" + op, op, [I([2, 1], BOOL), I([1, 5], BOOL)])
for op in ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]:
    case("cmp_" + op, op, [I([4, 1, 3]), I([2, 1])], opset=16)
for op in ["Max", "Min", "Mean", "Sum"]:
    case("var_" + op, op, [I([3, 1]), I([1, 4]), I([2, 1, 1])])
case("where", "Where", [I([1, 4], BOOL), I([3, 1]), I([3, 4])])

# conv family
W = lambda *s: I(s)  # weights as inputs keep fixtures tiny
case("conv_basic", "Conv", [I([1, 3, 10, 12]), W(8, 3, 3, 3)])
case("conv_pads_strides", "Conv", [I([2, 3, 11, 9]), W(4, 3, 3, 5)],
     {"pads": [1, 2, 1, 2], "strides": [2, 3]})
case("conv_dilation", "Conv", [I([1, 2, 15, 15]), W(4, 2, 3, 3)],
     {"dilations": [2, 3]})
case("conv_group", "Conv", [I([1, 8, 7, 7]), W(16, 2, 3, 3), I([16])],
     {"group": 4, "pads": [1, 1, 1, 1]})
case("conv_same_upper", "Conv", [I([1, 3, 11, 10]), W(6, 3, 4, 3)],
     {"auto_pad": "SAME_UPPER", "strides": [2, 3]})
case("conv_same_lower", "Conv", [I([1, 3, 9, 9]), W(6, 3, 2, 2)],
     {"auto_pad": "SAME_LOWER"})
case("conv_valid", "Conv", [I([1, 3, 9, 8]), W(6, 3, 3, 2)],
     {"auto_pad": "VALID", "strides": [2, 2]})
case("conv_1d", "Conv", [I([2, 4, 20]), W(5, 4, 3)], {"strides": [2]})
case("conv_3d", "Conv", [I([1, 2, 5, 6, 7]), W(3, 2, 2, 3, 3)],
     {"pads": [0, 1, 1, 0, 1, 1]})
case("conv_kernel_attr", "Conv", [I([1, 3, 8, 8]), W(4, 3, 3, 3)],
     {"kernel_shape": [3, 3]})
case("convT_basic", "ConvTranspose", [I([1, 4, 5, 5]), W(4, 2, 3, 3)],
     {"strides": [2, 2]})
case("convT_pads_outpad", "ConvTranspose", [I([1, 4, 5, 6]), W(4, 3, 3, 3)],
     {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 0]})
case("convT_group_dil", "ConvTranspose", [I([1, 4, 5, 5]), W(4, 2, 3, 3)],
     {"group": 2, "dilations": [2, 2]})
case("convT_output_shape", "ConvTranspose", [I([1, 4, 5, 5]), W(4, 2, 3, 3)],
     {"strides": [2, 2], "output_shape": [10, 11]})
case("convT_same", "ConvTranspose", [I([1, 4, 5, 5]), W(4, 2, 3, 3)],
     {"strides": [2, 2], "auto_pad": "SAME_UPPER"})
case("conv_integer", "ConvInteger", [I([1, 3, 6, 6], U8), I([2, 3, 3, 3], U8)],
     opset=10)

# pooling
case("maxpool", "MaxPool", [I([1, 3, 9, 9])], {"kernel_shape": [3, 3],
     "strides": [2, 2]})
case("maxpool_pads_idx", "MaxPool", [I([1, 3, 9, 8])],
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
     n_out=2)
case("maxpool_dil", "MaxPool", [I([1, 1, 10, 10])],
     {"kernel_shape": [2, 2], "dilations": [2, 2]})
case("maxpool_same", "MaxPool", [I([1, 1, 7, 7])],
     {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"})
case("maxpool_ceil", "MaxPool", [I([1, 1, 6, 6])],
     {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})
# onnx 1.12 says 4x4 here; PyTorch (and onnxruntime) give 3x3 because the
# last window would start inside the end padding.
case("maxpool_ceil_pad", "MaxPool", [I([1, 1, 5, 5])],
     {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1],
      "ceil_mode": 1}, expect="torch_maxpool")
case("avgpool", "AveragePool", [I([2, 3, 10, 7])],
     {"kernel_shape": [3, 2], "strides": [3, 2], "pads": [1, 0, 1, 0]})
case("avgpool_ceil", "AveragePool", [I([1, 2, 7, 7])],
     {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1})
case("lppool", "LpPool", [I([1, 2, 8, 8])], {"kernel_shape": [2, 2],
     "strides": [2, 2]})
case("gap", "GlobalAveragePool", [I([2, 5, 7, 3])])
case("gmp", "GlobalMaxPool", [I([2, 5, 7])])

# normalisation
case("batchnorm", "BatchNormalization", [I([2, 3, 4, 4])] + [I([3])] * 4)
case("instnorm", "InstanceNormalization", [I([2, 3, 4, 4]), I([3]), I([3])])
case("layernorm", "LayerNormalization", [I([2, 5, 8]), I([8]), I([8])],
     {"axis": -1}, n_out=3)
case("layernorm_axis1", "LayerNormalization", [I([2, 5, 8]), I([5, 8])],
     {"axis": 1}, n_out=3)
case("groupnorm", "GroupNormalization", [I([2, 6, 4, 4]), I([3]), I([3])],
     {"num_groups": 3}, opset=18, expect=[(F32, [2, 6, 4, 4])])

# matmul family
case("gemm", "Gemm", [I([4, 5]), I([5, 6]), I([6])])
case("gemm_trans", "Gemm", [I([5, 4]), I([6, 5]), I([1, 6])],
     {"transA": 1, "transB": 1})
case("matmul_2d", "MatMul", [I([3, 4]), I([4, 5])])
case("matmul_batch_bcast", "MatMul", [I([2, 1, 3, 4]), I([5, 4, 6])])
case("matmul_vec_left", "MatMul", [I([4]), I([2, 4, 5])])
case("matmul_vec_right", "MatMul", [I([2, 3, 4]), I([4])])
case("matmul_integer", "MatMulInteger", [I([3, 4], U8), I([4, 5], U8)],
     opset=10)
case("einsum_bmm", "Einsum", [I([2, 3, 4]), I([2, 4, 5])],
     {"equation": "bij,bjk->bik"}, opset=12, expect="torch_einsum")
case("einsum_attn", "Einsum", [I([2, 4, 7, 8]), I([2, 4, 9, 8])],
     {"equation": "bhqd,bhkd->bhqk"}, opset=12, expect="torch_einsum")
case("einsum_transpose", "Einsum", [I([3, 5])], {"equation": "ij->ji"},
     opset=12, expect="torch_einsum")
case("einsum_ellipsis", "Einsum", [I([2, 3, 4, 5]), I([5, 6])],
     {"equation": "...ij,jk->...ik"}, opset=12, expect="torch_einsum")
case("einsum_implicit", "Einsum", [I([3, 4]), I([4, 5])],
     {"equation": "ij,jk"}, opset=12, expect="torch_einsum")
case("einsum_sum", "Einsum", [I([3, 4])], {"equation": "ij->"}, opset=12, expect="torch_einsum")

# shape ops
case("shape", "Shape", [I([2, 3, 5])], fold=[2, 3, 5])
case("shape_start_end", "Shape", [I([2, 3, 5, 7])], {"start": 1, "end": -1},
     opset=15, fold=[3, 5])
case("size", "Size", [I([2, 3, 5])], fold=[30])
case("reshape_basic", "Reshape", [I([2, 3, 4]), C([4, 6])])
case("reshape_zero_neg", "Reshape", [I([2, 3, 4]), C([0, -1])])
case("reshape_neg_mid", "Reshape", [I([2, 3, 4, 5]), C([2, -1, 5])])
case("reshape_allowzero", "Reshape", [I([0, 3]), C([3, 0])],
     {"allowzero": 1}, opset=14)
case("reshape_fold", "Reshape", [C([[1, 2, 3], [4, 5, 6]]), C([3, 2])],
     fold=[1, 2, 3, 4, 5, 6])
case("flatten", "Flatten", [I([2, 3, 4, 5])], {"axis": 2})
case("flatten_neg", "Flatten", [I([2, 3, 4, 5])], {"axis": -1}, opset=13)
case("flatten_0", "Flatten", [I([2, 3, 4])], {"axis": 0})
case("transpose", "Transpose", [I([2, 3, 4])], {"perm": [1, 2, 0]})
case("transpose_default", "Transpose", [I([2, 3, 4])])
case("transpose_fold", "Transpose", [C([[1, 2, 3], [4, 5, 6]])],
     {"perm": [1, 0]}, fold=[1, 4, 2, 5, 3, 6])
case("squeeze_11", "Squeeze", [I([1, 3, 1, 4])], {"axes": [0, -2]}, opset=11)
case("squeeze_13", "Squeeze", [I([1, 3, 1, 4]), C([2])], opset=13)
case("squeeze_all", "Squeeze", [I([1, 3, 1, 4])], opset=13)
case("unsqueeze_11", "Unsqueeze", [I([3, 4])], {"axes": [0, 3]}, opset=11)
case("unsqueeze_13", "Unsqueeze", [I([3, 4]), C([-1, 1])], opset=13)
case("unsqueeze_fold", "Unsqueeze", [C(7), C([0])], opset=13, fold=[7])
case("concat", "Concat", [I([2, 3]), I([2, 5]), I([2, 1])], {"axis": 1})
case("concat_neg", "Concat", [I([2, 3, 4]), I([1, 3, 4])], {"axis": -3})
case("concat_fold", "Concat", [C([1, 2]), C([3]), C([4, 5])], {"axis": 0},
     fold=[1, 2, 3, 4, 5])
case("split_equal", "Split", [I([6, 4])], {"axis": 0}, n_out=3, opset=13)
case("split_attr", "Split", [I([2, 10])], {"axis": 1, "split": [3, 7]},
     n_out=2, opset=11)
case("split_input", "Split", [I([2, 10]), C([4, 6])], {"axis": -1},
     n_out=2, opset=13)
case("split_num_outputs", "Split", [I([2, 10])],
     {"axis": 1, "num_outputs": 3}, n_out=3, opset=18,
     expect=[(F32, [2, 4]), (F32, [2, 4]), (F32, [2, 2])])
case("slice_9", "Slice", [I([5, 6])], {"starts": [1, 0], "ends": [4, 3]},
     opset=9)
case("slice_basic", "Slice", [I([5, 6, 7]), C([1, 2]), C([4, 100]), C([0, 2])])
case("slice_negative", "Slice", [I([5, 6, 7]), C([-3]), C([-1]), C([1])])
case("slice_step", "Slice", [I([10, 6]), C([1]), C([9]), C([0]), C([3])])
case("slice_neg_step", "Slice", [I([10, 6]), C([-1]), C([-100000]), C([0]),
                                 C([-2])])
case("slice_clamp", "Slice", [I([4, 4]), C([-10, 2]), C([10, 1000])])
case("slice_int_max", "Slice", [I([4, 9]), C([2]),
                                C([9223372036854775807]), C([1])])
case("slice_fold", "Slice", [C([10, 20, 30, 40, 50]), C([-3]), C([5])],
     fold=[30, 40, 50])
case("gather", "Gather", [I([5, 4, 3]), C([[0, 1], [2, 3]])], {"axis": 1})
case("gather_scalar", "Gather", [I([5, 4]), C(2)], {"axis": 0})
case("gather_fold", "Gather", [C([7, 8, 9]), C(-1)], {"axis": 0}, fold=[9])
case("gather_elements", "GatherElements", [I([3, 4]), I([3, 2], I64)],
     {"axis": 1})
case("gather_nd", "GatherND", [I([2, 3, 4]), I([5, 2], I64)])
case("gather_nd_batch", "GatherND", [I([2, 3, 4]), I([2, 1], I64)],
     {"batch_dims": 1}, opset=12)
case("scatter_nd", "ScatterND", [I([4, 5]), I([2, 1], I64), I([2, 5])])
case("scatter_elements", "ScatterElements", [I([3, 4]), I([2, 2], I64),
                                             I([2, 2])], {"axis": 0})
case("expand", "Expand", [I([3, 1]), C([2, 1, 4])])
case("expand_fold", "Expand", [C([[1], [2]]), C([2, 3])],
     fold=[1, 1, 1, 2, 2, 2])
case("tile", "Tile", [I([2, 3]), C([3, 2])])
case("tile_fold", "Tile", [C([1, 2]), C([2])], fold=[1, 2, 1, 2])
case("pad_7", "Pad", [I([2, 3])], {"pads": [1, 0, 2, 3]}, opset=7)
case("pad_11", "Pad", [I([2, 3, 4]), C([0, 1, 2, 0, 3, 4])], opset=11)
case("pad_18_axes", "Pad", [I([2, 3, 4]), C([1, 2, 3, 4]), None, C([0, 2])],
     opset=18, expect=[(F32, [6, 3, 10])])
case("range", "Range", [C(2), C(11), C(3)], fold=[2, 5, 8])
case("range_float", "Range", [C(0.0), C(1.0), C(0.25)])
case("range_neg", "Range", [C(10), C(4), C(-2)], fold=[10, 8, 6])
case("constant_of_shape", "ConstantOfShape", [C([2, 3])],
     {"value": numpy_helper.from_array(np.array([1], np.int64))},
     fold=[1] * 6)
case("constant_of_shape_default", "ConstantOfShape", [C([4])])
case("constant_tensor", "Constant", [],
     {"value": numpy_helper.from_array(np.array([[1, 2], [3, 4]], np.int64))},
     fold=[1, 2, 3, 4])
case("constant_value_ints", "Constant", [], {"value_ints": [5, 6, 7]},
     opset=13, fold=[5, 6, 7])
case("constant_value_float", "Constant", [], {"value_float": 2.5}, opset=13)
case("constant_value_int", "Constant", [], {"value_int": 4}, opset=13,
     fold=[4])
case("nonzero_const", "NonZero", [C([[1, 0], [0, 3]])],
     expect=[(I64, [2, 2])], fold=[0, 1, 0, 1])
case("cumsum", "CumSum", [I([3, 4]), C(1)])
case("cumsum_fold", "CumSum", [C([1, 2, 3, 4]), C(0)], fold=[1, 3, 6, 10])
case("trilu", "Trilu", [I([2, 4, 4])], {"upper": 0}, opset=14)
case("trilu_fold", "Trilu", [C([[1, 1, 1], [1, 1, 1]]), C(1)], opset=14,
     fold=[0, 1, 1, 0, 0, 1])
case("onehot", "OneHot", [I([2, 3], I64), C(5), C([0.0, 1.0])],
     {"axis": 1}, opset=11, expect=[(F32, [2, 5, 3])])
case("argmax", "ArgMax", [I([3, 4, 5])], {"axis": 1})
case("argmin_nokeep", "ArgMin", [I([3, 4, 5])], {"axis": -1, "keepdims": 0})
for op in ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"]:
    case("reduce13_" + op, op, [I([2, 3, 4])], {"axes": [1]}, opset=13)
    case("reduce18_" + op, op, [I([2, 3, 4]), C([0, 2])], {"keepdims": 0},
         opset=18)
case("reducesum_11", "ReduceSum", [I([2, 3, 4])], {"axes": [-1]}, opset=11)
case("reducesum_13", "ReduceSum", [I([2, 3, 4]), C([1])], {"keepdims": 0},
     opset=13)
case("reducesum_all", "ReduceSum", [I([2, 3, 4])], opset=13)
case("reduceprod_fold", "ReduceProd", [C([2, 3, 4])], {"keepdims": 0},
     opset=13, fold=[24])
case("topk", "TopK", [I([3, 10]), C([4])], n_out=2)
case("topk_7", "TopK", [I([3, 10])], {"k": 2, "axis": 0}, n_out=2, opset=7)
case("resize_scales", "Resize", [I([1, 3, 4, 5]), None,
                                 C([1.0, 1.0, 2.0, 1.5])], opset=13)
case("resize_sizes", "Resize", [I([1, 3, 4, 5]), None, None,
                                C([1, 3, 9, 7])], opset=13)
case("resize_10", "Resize", [I([1, 3, 4, 5]), C([1.0, 1.0, 0.5, 2.0])],
     opset=10)
case("upsample_9", "Upsample", [I([1, 3, 4, 5]), C([1.0, 1.0, 2.0, 2.0])],
     opset=9)
case("depth_to_space", "DepthToSpace", [I([1, 8, 3, 4])], {"blocksize": 2})
case("space_to_depth", "SpaceToDepth", [I([1, 2, 6, 4])], {"blocksize": 2})
case("compress_const", "Compress", [I([3, 4]), C([True, False, True])],
     {"axis": 0}, expect=[(F32, [2, 4])])
case("reverse_sequence", "ReverseSequence", [I([4, 3, 2]), I([3], I64)],
     {"batch_axis": 1, "time_axis": 0})
case("quantize", "QuantizeLinear", [I([2, 3]), C(0.1), C(np.uint8(3), U8)])
case("dequantize", "DequantizeLinear", [I([2, 3], U8), C(0.1),
                                        C(np.uint8(3), U8)])
case("nms", "NonMaxSuppression", [I([1, 6, 4]), I([1, 1, 6])],
     expect=[(I64, [None, 3])])
case("grid_sample", "GridSample", [I([2, 3, 8, 8]), I([2, 5, 6, 2])],
     opset=16)
case("roi_align", "RoiAlign", [I([1, 3, 8, 8]), I([4, 4]), I([4], I64)],
     {"output_height": 2, "output_width": 3}, opset=16)
case("bernoulli", "Bernoulli", [I([3, 4])], opset=15)
case("random_normal_like", "RandomNormalLike", [I([3, 4])])
case("eyelike", "EyeLike", [I([3, 4])])

# recurrent layers and opset-23 attention ops (onnx 1.12 predates opset
# 23: those expectations follow the ONNX spec's formulas, oracle 'explicit')
case("lstm", "LSTM", [I([5, 2, 4]), I([1, 12, 4]), I([1, 12, 3])],
     {"hidden_size": 3}, n_out=3)
case("lstm_bidir_layout1", "LSTM", [I([2, 5, 4]), I([2, 12, 4]),
                                    I([2, 12, 3])],
     {"hidden_size": 3, "direction": "bidirectional", "layout": 1}, n_out=3,
     opset=14)
case("gru", "GRU", [I([5, 2, 4]), I([2, 9, 4]), I([2, 9, 3])],
     {"hidden_size": 3, "direction": "bidirectional"}, n_out=2)
case("rnn", "RNN", [I([5, 2, 4]), I([1, 3, 4]), I([1, 3, 3])],
     {"hidden_size": 3}, n_out=2)
case("attention_4d", "Attention", [I([2, 8, 5, 16]), I([2, 2, 7, 16]),
                                   I([2, 2, 7, 12])], opset=23, n_out=1,
     expect=[(F32, [2, 8, 5, 12])])
case("attention_3d", "Attention", [I([2, 5, 64]), I([2, 7, 32]),
                                   I([2, 7, 32])],
     {"q_num_heads": 4, "kv_num_heads": 2}, opset=23, n_out=1,
     expect=[(F32, [2, 5, 64])])
case("rms_norm", "RMSNormalization", [I([2, 5, 8]), I([8])], opset=23,
     expect=[(F32, [2, 5, 8])])

# more variants
case("resize_sizes_11_roi", "Resize", [I([1, 3, 4, 5]), C([], F32), C([], F32),
                                       C([1, 3, 8, 3])], opset=11)
case("resize_18_axes", "Resize", [I([1, 3, 4, 5]), None, C([2.0, 0.5])],
     {"axes": [2, 3]}, opset=18, expect=[(F32, [1, 3, 8, 2])])
case("resize_18_aspect", "Resize", [I([1, 3, 4, 6]), None, None, C([8, 8])],
     {"axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"}, opset=18,
     expect=[(F32, [1, 3, 5, 8])])
case("reduce18_noop", "ReduceMean", [I([2, 3, 4])],
     {"noop_with_empty_axes": 1}, opset=18, expect=[(F32, [2, 3, 4])])
case("clip_11_min_only", "Clip", [I([3, 4]), C(0.0)], opset=11)
case("cumsum_excl_rev_fold", "CumSum", [C([1, 2, 3, 4]), C(0)],
     {"exclusive": 1, "reverse": 1}, fold=[9, 7, 4, 0])
case("gather_neg_axis", "Gather", [I([5, 4, 3]), C([-1, 0, 2])],
     {"axis": -2})
case("slice_13_neg_axes", "Slice", [I([5, 6, 7]), C([1]), C([-1]), C([-1])],
     opset=13)
case("depth_to_space_crd", "DepthToSpace", [I([2, 18, 3, 4])],
     {"blocksize": 3, "mode": "CRD"}, opset=13)
case("avgpool_count_pad_dil", "AveragePool", [I([1, 2, 9, 9])],
     {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2],
      "count_include_pad": 1})
case("maxpool_dil_ceil", "MaxPool", [I([1, 2, 10, 10])],
     {"kernel_shape": [3, 3], "dilations": [2, 2], "strides": [2, 2],
      "ceil_mode": 1})
case("convT_1d", "ConvTranspose", [I([2, 3, 7]), W(3, 5, 4)],
     {"strides": [3], "pads": [1, 2]})
case("einsum_bkj", "Einsum", [I([2, 3, 4]), I([2, 5, 4])],
     {"equation": "bij,bkj->bik"}, opset=12, expect="torch_einsum")
case("einsum_outer", "Einsum", [I([3]), I([4])],
     {"equation": "i,j->ij"}, opset=12, expect="torch_einsum")
case("matmul_vec_vec", "MatMul", [I([4]), I([4])])
case("expand_fewer_dims", "Expand", [I([2, 3]), C([1])])
case("where_bcast", "Where", [I([2, 1, 4], BOOL), I([3, 1]), C(0.0)])
case("flatten_11_neg", "Flatten", [I([2, 3, 4, 5])], {"axis": -3},
     opset=11)
case("squeeze_11_neg", "Squeeze", [I([2, 1, 4, 1])], {"axes": [-1]},
     opset=11)
case("topk_11_smallest", "TopK", [I([4, 9]), C([3])],
     {"axis": 1, "largest": 0}, n_out=2, opset=11)
case("shape_neg_start", "Shape", [I([2, 3, 5, 7])], {"start": -2},
     opset=15, fold=[5, 7])
case("range_int_fold", "Range", [C(5), C(-1), C(-3)], fold=[5, 2])
case("concat_const_2d", "Concat", [C([[1, 2]]), C([[3, 4], [5, 6]])],
     {"axis": 0}, fold=[1, 2, 3, 4, 5, 6])
case("slice_fold_2d_step", "Slice",
     [C([[1, 2, 3, 4], [5, 6, 7, 8]]), C([3]), C([-10]), C([1]), C([-2])],
     fold=[4, 2, 8, 6])
case("squeeze_fold", "Squeeze", [C([[9]]), C([0, 1])], opset=13, fold=[9])
case("equal_where_fold", "Where",
     [C([False, True, False]), C([1, 1, 1]), C([2, -1, 5])],
     fold=[2, 1, 5])

case("reducemax_float_fold", "ReduceMax", [C([[3.0, 7.5], [1.0, 2.0]])],
     {"axes": [1], "keepdims": 0}, opset=13, fold=[7.5, 2.0])
case("reducemean_float_fold", "ReduceMean", [C([1.0, 2.0, 6.0])],
     {"keepdims": 0}, opset=13, fold=[3.0])

# less common ops
case("sce_loss_none", "SoftmaxCrossEntropyLoss", [I([4, 5, 3]), I([4, 3], I64)],
     {"reduction": "none"}, n_out=2, opset=13)
case("sce_loss_mean", "SoftmaxCrossEntropyLoss", [I([4, 5]), I([4], I64)],
     opset=13)
case("nll_loss_none", "NegativeLogLikelihoodLoss", [I([4, 5, 2, 3]),
                                                    I([4, 2, 3], I64)],
     {"reduction": "none"}, opset=13)
case("hann_window", "HannWindow", [C(10)])
case("blackman_window_f64", "BlackmanWindow", [C(6)], {"output_datatype": 11})
case("max_unpool", "MaxUnpool", [I([1, 2, 3, 3]), I([1, 2, 3, 3], I64)],
     {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11)
case("max_unpool_shape", "MaxUnpool", [I([1, 2, 3, 3]), I([1, 2, 3, 3], I64),
                                       C([1, 2, 7, 7])],
     {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11,
     expect=[(F32, [1, 2, 7, 7])])
case("center_crop_pad", "CenterCropPad", [I([5, 8, 3]), C([6, 4])],
     {"axes": [0, 1]}, opset=18, expect=[(F32, [6, 4, 3])])
case("det", "Det", [I([2, 3, 4, 4])])
case("multinomial", "Multinomial", [I([3, 10])], {"sample_size": 4})
case("unique_axis", "Unique", [I([4, 6])], {"axis": 1}, n_out=4, opset=11,
     expect=[(F32, [4, None]), (I64, [None]), (I64, [6]), (I64, [None])])

for op in ["Acosh", "Asinh", "Atanh"]:
    case("unary_" + op, op, [I([2, 3])])
for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
    case("bitwise_" + op, op, [I([2, 1], I32), I([3], I32)], opset=18,
         expect=[(I32, [2, 3])])
case("bitwise_not", "BitwiseNot", [I([2, 3], I32)], opset=18,
     expect=[(I32, [2, 3])])
case("dynamic_quantize", "DynamicQuantizeLinear", [I([3, 4])], n_out=3,
     opset=11)
case("global_lp_pool", "GlobalLpPool", [I([2, 3, 5, 6])])
case("hamming_window", "HammingWindow", [C(7)])
case("max_roi_pool", "MaxRoiPool", [I([1, 3, 8, 8]), I([5, 5])],
     {"pooled_shape": [2, 3]})
case("qlinear_conv", "QLinearConv",
     [I([1, 3, 8, 8], U8), C(0.1), C(np.uint8(0), U8), I([4, 3, 3, 3], U8),
      C(0.1), C(np.uint8(0), U8), C(0.2), C(np.uint8(0), U8)],
     {"pads": [1, 1, 1, 1], "strides": [2, 2]}, opset=10)
case("qlinear_matmul", "QLinearMatMul",
     [I([2, 3, 4], U8), C(0.1), C(np.uint8(0), U8), I([4, 5], U8),
      C(0.1), C(np.uint8(0), U8), C(0.2), C(np.uint8(0), U8)], opset=10)
case("random_normal", "RandomNormal", [], {"shape": [3, 4]})
case("random_uniform_f64", "RandomUniform", [], {"shape": [2, 5],
                                                  "dtype": 11})
case("random_uniform_like", "RandomUniformLike", [I([3, 2])])
case("scatter_9", "Scatter", [I([3, 4]), I([2, 2], I64), I([2, 2])],
     {"axis": 1}, opset=9)
case("rotary_embedding", "RotaryEmbedding",
     [I([2, 4, 5, 8]), I([5, 4]), I([5, 4]), I([2, 5], I64)], opset=23,
     expect=[(F32, [2, 4, 5, 8])])


def scan_body(names, outs):
    # state s [4], scan slice x [4]: s' = s + x, y = x * 2
    body = h.make_graph(
        [h.make_node("Add", ["s", "x"], ["s2"]),
         h.make_node("Mul", ["x", "x"], ["y"])], "body",
        [h.make_tensor_value_info("s", F32, [4]),
         h.make_tensor_value_info("x", F32, [4])],
        [h.make_tensor_value_info("s2", F32, [4]),
         h.make_tensor_value_info("y", F32, [4])])
    return [h.make_node("Scan", names, outs, name="n0", num_scan_inputs=1,
                        body=body)]


case("scan", "Scan", [I([4]), I([6, 4])], n_out=2, nodes=scan_body)

# folding through int arithmetic and comparisons
case("fold_add", "Add", [C([2, 3]), C([10])], fold=[12, 13])
case("fold_div", "Div", [C([7, -7]), C([2])], fold=[3, -3])
case("fold_mod", "Mod", [C([7, -7]), C([3])], fold=[1, 2])
case("fold_mul_bcast", "Mul", [C([[1], [2]]), C([3, 4])], fold=[3, 4, 6, 8])
case("fold_equal", "Equal", [C([1, 2, 3]), C([2])], fold=[0, 1, 0])
case("fold_where", "Where", [C([True, False]), C([1, 2]), C([5, 6])],
     fold=[1, 6])
case("fold_cast", "Cast", [C([1.7, -1.7])], {"to": I64}, fold=[1, -1])
case("fold_max", "Max", [C([1, 5]), C([3, 2])], fold=[3, 5])
case("fold_pow_int", "Pow", [C([2, -3, 1, 0]), C([10, 3, 4000000000000, 0])],
     fold=[1024, -27, 1, 1])

# unknown ops and custom domains: outputs stay unshaped (no expected shape)
case("unknown_op", "FancyOp", [I([2, 3])], domain="com.example",
     expect=[(0, None)])

# ---------------------------------------------------------------------------


def torch_expect(c):
    import torch
    if c["expect"] == "torch_maxpool":
        a = c["attrs"]
        x = torch.zeros(c["inputs"][0].shape)
        y = torch.nn.functional.max_pool2d(
            x, a["kernel_shape"], a["strides"], a["pads"][0],
            ceil_mode=bool(a["ceil_mode"]))
        return [(F32, list(y.shape))]
    if c["expect"] == "torch_einsum":
        xs = [torch.zeros(x.shape) for x in c["inputs"]]
        y = torch.einsum(c["attrs"]["equation"], *xs)
        return [(F32, list(y.shape))]
    raise ValueError(c["expect"])


def make_all():
    os.makedirs(OUT, exist_ok=True)
    expected = {}
    problems = []
    for c in CASES:
        m = build(c)
        got, err = infer(m)
        exp = c["expect"]
        oracle = "onnx"
        if exp in ("torch_maxpool", "torch_einsum"):
            exp = torch_expect(c)
            oracle = "torch"
        elif exp is not None:
            oracle = "explicit"
            if got and got == exp:
                oracle = "onnx"
        else:
            if got is None or any(s is None for _, s in got):
                problems.append("%s: onnx could not infer (%s)" % (
                    c["name"], err or got))
                continue
            exp = got
        if c["expect"] is not None and got is not None and oracle != "onnx":
            # say where onnx differs, for the record
            if any(s is not None for _, s in got) and got != exp:
                print("note: %s: onnx infers %s, expected %s (%s)" %
                      (c["name"], got, exp, oracle))
        fname = c["name"] + ".onnx"
        onnx.save(m, os.path.join(OUT, fname))
        ent = {"file": fname, "op": c["op"], "opset": c["opset"],
               "oracle": oracle,
               "outputs": [{"name": "out%d" % k, "dtype": dt,
                            "shape": sh} for k, (dt, sh) in enumerate(exp)]}
        if c["fold"] is not None:
            ent["fold"] = c["fold"]
        expected[c["name"]] = ent
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=0, sort_keys=True)
        f.write("\n")
    for p in problems:
        print("PROBLEM", p)
    print("%d cases written to %s" % (len(expected), OUT))
    return not problems


# ---------------------------------------------------------------------------
# A tiny Hugging Face-style transformer with the shape arithmetic exporters
# emit for BERT/GPT-2/LLaMA: size() -> Shape/Gather, view(b, t, h, -1),
# attention-mask extension, cumsum position ids, arange causal masks with
# masked_fill (ConstantOfShape/Where), split, cat of rotated halves, and an
# in-place slice assignment (ScatterND).

def tiny_hf():
    import math
    import torch
    import torch.nn as nn

    class Layer(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.h = heads
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.o = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.up = nn.Linear(d, 2 * d)
            self.down = nn.Linear(2 * d, d)

        def forward(self, x, bias):
            b, t, d = x.size()
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, t, self.h, -1).transpose(1, 2)
            k = k.view(b, t, self.h, -1).transpose(1, 2)
            v = v.view(b, t, self.h, -1).transpose(1, 2)
            half = q.size(-1) // 2      # rotary-style halves
            q = torch.cat([-q[..., half:], q[..., :half]], dim=-1)
            att = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
            att = (att + bias).softmax(-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, -1)
            x = x + self.o(y)
            return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))

    class TinyHF(nn.Module):
        def __init__(self, vocab=100, d=32, heads=4, layers=2, maxpos=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(maxpos, d)
            self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
            self.lnf = nn.LayerNorm(d)

        def forward(self, ids, mask):
            b, t = ids.size()
            pos = (torch.cumsum(mask, dim=1) * mask - 1).clamp(min=0)
            x = self.tok(ids) + self.pos(pos)
            ext = mask[:, None, None, :].to(x.dtype)
            ext = (1.0 - ext) * torch.finfo(x.dtype).min
            r = torch.arange(t, device=ids.device)
            causal = r[None, :] <= r[:, None]
            cbias = torch.zeros(t, t).masked_fill(~causal, float("-inf"))
            bias = ext + cbias[None, None].expand(b, 1, t, t)
            for layer in self.layers:
                x = layer(x, bias)
            x = self.lnf(x)
            out = torch.zeros_like(x)
            out[:, 0] = x[:, 0] * 2.0
            return out + x

    torch.manual_seed(0)
    return TinyHF().eval()


def export_hf(model, b, t, path, dynamic):
    import torch
    ids = torch.randint(0, 100, (b, t))
    mask = torch.ones(b, t, dtype=torch.int64)
    dyn = None
    if dynamic:
        dyn = {"input_ids": {0: "batch", 1: "seq"},
               "attention_mask": {0: "batch", 1: "seq"},
               "output": {0: "batch", 1: "seq"}}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), path, opset_version=17,
                          do_constant_folding=True,
                          input_names=["input_ids", "attention_mask"],
                          output_names=["output"], dynamic_axes=dyn)


def known_shapes(m):
    m = onnx.shape_inference.infer_shapes(m, data_prop=True)
    out = {}
    for vi in list(m.graph.value_info) + list(m.graph.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in t.shape.dim]
        if None not in dims:
            out[vi.name] = dims
    return out


def np_run(m, feeds):
    """A small numpy interpreter for the ops of tiny_hf: returns every
    tensor's value. It is the shape oracle (ground truth by execution);
    its output is checked against PyTorch's."""
    import math
    env = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    env.update(feeds)
    for n in m.graph.node:
        a = {x.name: h.get_attribute_value(x) for x in n.attribute}
        x = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op in ("Add", "Sub", "Mul", "Div", "Equal", "LessOrEqual"):
            f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
                 "Equal": np.equal, "LessOrEqual": np.less_equal}.get(op)
            if op == "Div":
                f = np.floor_divide if x[0].dtype.kind == "i" else np.divide
            y = [np.asarray(f(x[0], x[1]))]
        elif op == "Cast":
            y = [x[0].astype(NP[a["to"]])]
        elif op == "Clip":
            y = [np.clip(x[0], x[1] if len(x) > 1 and x[1] is not None
                         else None, x[2] if len(x) > 2 else None)]
        elif op == "Concat":
            y = [np.concatenate(x, axis=a["axis"])]
        elif op == "Constant":
            y = [numpy_helper.to_array(a["value"])]
        elif op == "ConstantOfShape":
            v = numpy_helper.to_array(a["value"]) if "value" in a else \
                np.zeros(1, np.float32)
            y = [np.full(tuple(x[0]), v[0], v.dtype)]
        elif op == "CumSum":
            y = [np.cumsum(x[0], axis=int(x[1])).astype(x[0].dtype)]
        elif op == "Erf":
            y = [np.vectorize(math.erf)(x[0]).astype(x[0].dtype)]
        elif op == "Expand":
            y = [np.broadcast_to(x[0], np.broadcast_shapes(
                x[0].shape, tuple(x[1]))).copy()]
        elif op == "Gather":
            y = [np.take(x[0], x[1], axis=a.get("axis", 0))]
        elif op == "Identity":
            y = [x[0]]
        elif op == "LayerNormalization":
            ax = a.get("axis", -1)
            mu = x[0].mean(axis=ax, keepdims=True)
            var = ((x[0] - mu) ** 2).mean(axis=ax, keepdims=True)
            y = [((x[0] - mu) / np.sqrt(var + a.get("epsilon", 1e-5)) * x[1]
                  + x[2]).astype(x[0].dtype)]
        elif op == "MatMul":
            y = [np.matmul(x[0], x[1])]
        elif op == "Neg":
            y = [-x[0]]
        elif op == "Not":
            y = [np.logical_not(x[0])]
        elif op == "Range":
            y = [np.arange(x[0], x[1], x[2], dtype=x[0].dtype)]
        elif op == "Reshape":
            sh = [x[0].shape[i] if v == 0 else v for i, v in enumerate(x[1])]
            y = [x[0].reshape(sh)]
        elif op == "ScatterND":
            out = x[0].copy()
            idx = x[1]
            for k in np.ndindex(idx.shape[:-1]):
                out[tuple(idx[k])] = x[2][k]
            y = [out]
        elif op == "Shape":
            y = [np.array(x[0].shape, np.int64)]
        elif op == "Slice":
            sl = [slice(None)] * x[0].ndim
            axes = x[3] if len(x) > 3 else range(len(x[1]))
            steps = x[4] if len(x) > 4 else [1] * len(x[1])
            for s0, e0, ax, st in zip(x[1], x[2], axes, steps):
                sl[ax] = slice(int(s0), int(e0), int(st))
            y = [x[0][tuple(sl)]]
        elif op == "Softmax":
            e = np.exp(x[0] - x[0].max(axis=a.get("axis", -1), keepdims=True))
            y = [e / e.sum(axis=a.get("axis", -1), keepdims=True)]
        elif op == "Split":
            cuts = np.cumsum(x[1])[:-1]
            y = np.split(x[0], cuts, axis=a.get("axis", 0))
        elif op == "Squeeze":
            y = [np.squeeze(x[0], axis=tuple(x[1]))]
        elif op == "Transpose":
            y = [np.transpose(x[0], a.get("perm"))]
        elif op == "Unsqueeze":
            r = x[0].ndim + len(x[1])
            y = [np.expand_dims(x[0], tuple(sorted(int(v) % r for v in x[1])))]
        elif op == "Where":
            y = [np.where(x[0], x[1], x[2])]
        else:
            raise SystemExit("np_run: no numpy version of " + op)
        for name, v in zip(n.output, y):
            env[name] = np.asarray(v)
    return env


def make_tiny_hf(batch=3, seq=7):
    """tiny_hf.onnx (exported per PROTOCOL.md at batch 2 / seq 16 with
    dynamic axes, stripped) and tiny_hf.json: the shape of every node output
    at batch/seq, found by executing the graph with numpy (checked against
    PyTorch's output), and how many of them onnx's own inference finds."""
    import tempfile
    import torch
    from onnx import external_data_helper
    model = tiny_hf()
    tmp = tempfile.mkdtemp(prefix="dlp_hf_")
    dyn_path = os.path.join(tmp, "dyn.onnx")
    export_hf(model, 2, 16, dyn_path, True)
    m = onnx.load(dyn_path)
    torch.manual_seed(1)
    ids = torch.randint(0, 100, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[1, 5:] = 0
    env = np_run(m, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})
    with torch.no_grad():
        ref = model(ids, mask).numpy()
    err = float(np.abs(env["output"] - ref).max())
    if not err < 1e-4:
        raise SystemExit("numpy run differs from torch by %g" % err)
    node_outs = [o for n in m.graph.node for o in n.output if o]
    shapes = {o: list(env[o].shape) for o in node_outs}
    fixed = onnx.load(dyn_path)
    for i in fixed.graph.input:
        for k, v in enumerate((batch, seq)):
            i.type.tensor_type.shape.dim[k].Clear()
            i.type.tensor_type.shape.dim[k].dim_value = v
    del fixed.graph.output[:]
    inferred = known_shapes(fixed)
    onnx_known = sum(1 for o in node_outs if inferred.get(o) == shapes[o])
    external_data_helper.convert_model_to_external_data(
        m, all_tensors_to_one_file=True, location="tiny_hf.weights",
        size_threshold=1024)
    onnx.save_model(m, os.path.join(tmp, "tiny_hf.onnx"))
    os.replace(os.path.join(tmp, "tiny_hf.onnx"),
               os.path.join(OUT, "tiny_hf.onnx"))
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)
    info = {"file": "tiny_hf.onnx", "dims": {"batch": batch, "seq": seq},
            "node_outputs": len(node_outs), "numpy_vs_torch_max_err": err,
            "onnx_infer_shapes_known": onnx_known,
            "ops": sorted({n.op_type for n in m.graph.node}),
            "shapes": shapes}
    with open(os.path.join(OUT, "tiny_hf.json"), "w") as f:
        json.dump(info, f, indent=0, sort_keys=True)
        f.write("\n")
    print("tiny_hf: %d node outputs shaped by execution (numpy vs torch "
          "max err %.2g); onnx infer_shapes(data_prop) finds %d (%.0f%%)" % (
              len(node_outs), err, onnx_known,
              100.0 * onnx_known / len(node_outs)))


# ---------------------------------------------------------------------------
# Small exported models with control flow and recurrent layers: the output
# shape at the bound dims comes from running the torch model.

def make_control_models(batch=3, seq=7):
    import tempfile
    import torch
    import torch.nn as nn
    from onnx import external_data_helper

    @torch.jit.script
    def loopy(x, n: int):
        for _ in range(n):
            x = x * 2 + 1
        if bool(x.sum() > 0):
            x = x.relu()
        else:
            x = -x
        return x

    class Loopy(nn.Module):
        def forward(self, x):
            return loopy(x, 3)

    class Rnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.e = nn.Embedding(50, 16)
            self.l = nn.LSTM(16, 24, 2, batch_first=True, bidirectional=True)
            self.g = nn.GRU(48, 8)

        def forward(self, ids):
            y, _ = self.l(self.e(ids))
            z, _ = self.g(y)
            return z

    torch.manual_seed(0)
    models = [
        ("loop_if", Loopy(), lambda b, t: torch.randn(b, 5), "input",
         {0: "batch"}),
        ("lstm_gru", Rnn().eval(), lambda b, t: torch.randint(0, 50, (b, t)),
         "input_ids", {0: "batch", 1: "seq"}),
    ]
    info = {}
    tmp = tempfile.mkdtemp(prefix="dlp_ctl_")
    for name, model, mk, iname, dyn in models:
        raw = os.path.join(tmp, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(model, (mk(2, 16),), raw, opset_version=17,
                              do_constant_folding=True, input_names=[iname],
                              output_names=["output"],
                              dynamic_axes={iname: dyn, "output": {0: "batch"}})
            want = list(model(mk(batch, seq)).shape)
        m = onnx.load(raw)
        external_data_helper.convert_model_to_external_data(
            m, all_tensors_to_one_file=True, location=name + ".weights",
            size_threshold=1024)
        onnx.save_model(m, os.path.join(tmp, "s.onnx"))
        os.replace(os.path.join(tmp, "s.onnx"), os.path.join(OUT, name + ".onnx"))
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        info[name] = {"file": name + ".onnx", "output": want,
                      "ops": sorted({n.op_type for n in m.graph.node})}
    os.rmdir(tmp)
    info["dims"] = {"batch": batch, "seq": seq}
    with open(os.path.join(OUT, "control_models.json"), "w") as f:
        json.dump(info, f, indent=0, sort_keys=True)
        f.write("\n")
    print("control models:", {k: v for k, v in info.items() if k != "dims"})


if __name__ == "__main__":
    ok = make_all()
    if "--ops-only" not in sys.argv:
        make_tiny_hf()
        make_control_models()
    sys.exit(0 if ok else 1)

"""Writes the small graphs of tests/test_memest.c (run with /usr/bin/python3):
memest_chain.onnx (views, in-place ReLU, one MatMul) and memest_sdpa.onnx /
memest_attn.onnx (attention exported as the SDPA symbolic does, and the
same without the operand scaling: materialised scores), memest_sdpa5.onnx /
memest_sdpa5d.onnx (the pattern on 5-D operands: the math path),
memest_split.onnx (a Split's parts: views of its input), memest_mask.onnx
(a mask built from shapes only), memest_bias.onnx (the same SDPA pattern
with a bias read from a weight, as T5's relative position bias: not fused),
memest_biascache.onnx (an eval-mode attention bias cache, LeViT),
memest_biascache_dedup.onnx (two of them, the tables merged by the exporter),
memest_window_copy.onnx and memest_matmul_copy.onnx (copies a permuted
layout forces: a window partition's reshape, at::matmul's operands),
memest_shared_local.onnx (a local two submodule calls read, ResNetV2),
memest_group_norm.onnx (GroupNorm + SiLU as timm's GroupNormAct exports),
memest_int64.onnx (an integer tensor, whose bytes no precision halves),
memest_const_float.onnx (a float built from a shape alone, float32 at
every precision),
memest_normact.onnx / memest_normact_blk.onnx (a folded-BatchNorm Conv
and the GELU of a norm-act module, and of the block),
memest_densecat.onnx / memest_densecat_root.onnx (a module's concatenated
parts and DenseNet's BatchNorm -> ReLU -> Conv on the concatenation, in a
module and in the root scope), memest_gpt2.onnx (GPT-2's embeddings and
a block: the locals its forward methods hold), memest_stem7.onnx /
memest_stem7s2.onnx (a 7x7 convolution of a 3-channel image, stride 1 and
2: DLA's fp16 stem workspace) and memest_conv.onnx
(a dense Conv, an in-place ReLU and a depthwise Conv: cuDNN workspaces),
memest_convbn.onnx
(a pointwise Conv with a folded BatchNorm, then a dense 3x3 one),
memest_linear.onnx (two Linear layers with a bias: cuBLASLt), memest_wstd.onnx
(weight standardisation and deduplicated initializers: the parameters
PyTorch holds), memest_scatter.onnx (a slice assignment lowered to
ScatterND) memest_fbias.onnx (SDPA with a folded constant bias) and memest_gelu.onnx /
memest_gelu2.onnx (the erf GELU between two Linear layers, and the same
pattern multiplied by another input), memest_relu_ffn.onnx (fc1 -> ReLU
-> fc2: in place in the CNN zoos, out of place in language models),
memest_encoder.onnx / memest_encoder_bert.onnx (a three-layer encoder
named as DeBERTa-v2 and as BERT export it), memest_linear4d.onnx /
memest_linear4d_perm.onnx (a Linear with a bias over a 4-D input:
ConvNeXt's channels-last MLP; and over a permuted one, which matmul
copies first), memest_mobileone.onnx / memest_csp.onnx / memest_osa.onnx /
memest_star.onnx (the locals timm's MobileOneBlock, CrossStage3, VoVNet
OSA block and StarNet block keep until they return)."""
import os
import numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

D = "tests/fixtures/memest/"

def save(nodes, ins, outs, inits, name, strip=False):
    """strip: initializers >= 1 KiB go to external data whose file is then
    deleted (the dataset's convention: shapes kept, weights not)."""
    g = h.make_graph(nodes, name, ins, outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    if not strip:
        onnx.save(m, D + name + ".onnx")
        return
    from onnx import external_data_helper
    external_data_helper.convert_model_to_external_data(
        m, all_tensors_to_one_file=True, location=name + ".weights",
        size_threshold=1024)
    onnx.save_model(m, D + name + ".onnx")
    os.remove(D + name + ".weights")

# q, k, v [1, 2, 64, 16] in, O out, and the scaled QK^T of the SDPA
# symbolic: Mul(q, c), Mul(k^T, c), MatMul
QKV_IN = [h.make_tensor_value_info(x, T.FLOAT, [1, 2, 64, 16]) for x in "QKV"]
O_OUT = [h.make_tensor_value_info("O", T.FLOAT, [1, 2, 64, 16])]
SCALED_SCORES = [h.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
                 h.make_node("Mul", ["Q", "c"], ["Qs"]),
                 h.make_node("Mul", ["Kt", "c"], ["Ks"]),
                 h.make_node("MatMul", ["Qs", "Ks"], ["S"])]

save([h.make_node("Relu", ["X"], ["A"]),
      h.make_node("Reshape", ["A", "shp"], ["B"]),
      h.make_node("Sigmoid", ["B"], ["C"]),
      h.make_node("MatMul", ["C", "W"], ["Dm"]),
      h.make_node("Relu", ["Dm"], ["Y"])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 1024])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 16])],
     [nh.from_array(np.array([1, 1024], np.int64), "shp"),
      nh.from_array(np.zeros((1024, 16), np.float32), "W")], "memest_chain")

for scaled in (True, False):
    q, k = ("Qs", "Ks") if scaled else ("Q", "Kt")
    nodes = [h.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2])]
    if scaled:
        nodes += [h.make_node("Mul", ["Q", "c"], ["Qs"]),
                  h.make_node("Mul", ["Kt", "c"], ["Ks"])]
    nodes += [h.make_node("MatMul", [q, k], ["S"]),
              h.make_node("Softmax", ["S"], ["P"], axis=-1),
              h.make_node("IsNaN", ["P"], ["N"]),
              h.make_node("Where", ["N", "z", "P"], ["P2"]),
              h.make_node("MatMul", ["P2", "V"], ["O"])]
    save(nodes, [h.make_tensor_value_info(x, T.FLOAT, [1, 2, 64, 16])
                 for x in "QKV"],
         [h.make_tensor_value_info("O", T.FLOAT, [1, 2, 64, 16])],
         [nh.from_array(np.array(0.5, np.float32), "c"),
          nh.from_array(np.array(0.0, np.float32), "z")],
         "memest_sdpa" if scaled else "memest_attn")

# The same SDPA pattern on 5-D operands [1, 2, 3, 64, 16] (batch, heads,
# windows, tokens, head dim: NesT's and Hiera's windowed attention): no
# fused kernel takes them, PyTorch runs the math path. memest_sdpa5d: 16
# tokens of head dimension 64 (the QK^T product's blocks dominate).
for name, shape in (("memest_sdpa5", [1, 2, 3, 64, 16]),
                    ("memest_sdpa5d", [1, 2, 3, 16, 64])):
    save([h.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 2, 4, 3]),
          h.make_node("Mul", ["Q", "c"], ["Qs"]),
          h.make_node("Mul", ["Kt", "c"], ["Ks"]),
          h.make_node("MatMul", ["Qs", "Ks"], ["S"]),
          h.make_node("Softmax", ["S"], ["P"], axis=-1),
          h.make_node("MatMul", ["P", "V"], ["O"])],
         [h.make_tensor_value_info(x, T.FLOAT, shape) for x in "QKV"],
         [h.make_tensor_value_info("O", T.FLOAT, shape)],
         [nh.from_array(np.array(0.5, np.float32), "c")], name)

# torch.split / unbind: X [1, 1024] -> MatMul -> QKV [1, 3072] -> Split
# into three [1, 1024] parts; Sigmoid of the first, times the third.
save([h.make_node("MatMul", ["X", "W"], ["QKV"]),
      h.make_node("Split", ["QKV", "sp"], ["P0", "P1", "P2"], axis=1),
      h.make_node("Sigmoid", ["P0"], ["S0"]),
      h.make_node("Mul", ["S0", "P2"], ["Y"])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 1024])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 1024]),
      h.make_tensor_value_info("P1", T.FLOAT, [1, 1024])],
     [nh.from_array(np.zeros((1024, 3072), np.float32), "W"),
      nh.from_array(np.array([1024, 1024, 1024], np.int64), "sp")],
     "memest_split", strip=True)

# SDPA with a mask built from the scores' shape only (what transformers
# exports for a causal mask and then skips at run time): ones -> Trilu ->
# Equal 0 -> Where(-inf, 0) -> Add to the scores.
save(SCALED_SCORES + [
      h.make_node("Shape", ["S"], ["shp"]),
      h.make_node("ConstantOfShape", ["shp"], ["One"],
                  value=nh.from_array(np.array([1.0], np.float32))),
      h.make_node("Trilu", ["One"], ["L"], upper=0),
      h.make_node("Equal", ["L", "z"], ["M"]),
      h.make_node("Where", ["M", "ninf", "z"], ["Wm"]),
      h.make_node("Add", ["S", "Wm"], ["Sm"]),
      h.make_node("Softmax", ["Sm"], ["P"], axis=-1),
      h.make_node("MatMul", ["P", "V"], ["O"])],
     QKV_IN, O_OUT,
     [nh.from_array(np.array(0.5, np.float32), "c"),
      nh.from_array(np.array(0.0, np.float32), "z"),
      nh.from_array(np.array(-np.inf, np.float32), "ninf")], "memest_mask")

# Conv 4->8 (3x3, pad 1), in-place Relu, depthwise Conv (group 8)
save([h.make_node("Conv", ["X", "W1"], ["A"], pads=[1, 1, 1, 1]),
      h.make_node("Relu", ["A"], ["R"]),
      h.make_node("Conv", ["R", "W2"], ["Y"], pads=[1, 1, 1, 1], group=8)],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 4, 8, 8])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 8, 8])],
     [nh.from_array(np.zeros((8, 4, 3, 3), np.float32), "W1"),
      nh.from_array(np.zeros((8, 1, 3, 3), np.float32), "W2")], "memest_conv")

# A pointwise Conv 16->8 whose weight carries a BatchNorm the exporter
# folded ("onnx::Conv_<n>"), in-place Relu, a dense 3x3 Conv 8->4
save([h.make_node("Conv", ["X", "onnx::Conv_3"], ["A"]),
      h.make_node("Relu", ["A"], ["R"]),
      h.make_node("Conv", ["R", "W2"], ["Y"], pads=[1, 1, 1, 1])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 16, 8, 8])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 4, 8, 8])],
     [nh.from_array(np.zeros((8, 16, 1, 1), np.float32), "onnx::Conv_3"),
      nh.from_array(np.zeros((4, 8, 3, 3), np.float32), "W2")], "memest_convbn")

# SDPA pattern whose additive bias is a weight [1,2,64,64] (T5's relative
# position bias reads one): PyTorch materialises the scores
save(SCALED_SCORES + [
      h.make_node("Add", ["S", "B"], ["Sm"]),
      h.make_node("Softmax", ["Sm"], ["P"], axis=-1),
      h.make_node("MatMul", ["P", "V"], ["O"])],
     QKV_IN, O_OUT,
     [nh.from_array(np.array(0.5, np.float32), "c"),
      nh.from_array(np.zeros((1, 2, 64, 64), np.float32), "B")], "memest_bias")

# Weight standardisation as the legacy exporter writes timm's StdConv2d /
# ScaledStdConv2d (BiT, NFNet): a training-mode BatchNormalization of the
# reshaped weight (folded into an initializer) whose mean and variance come
# from a second, transposed folded copy of it (not a tensor in PyTorch);
# the gain read through Identity from a deduplicated module parameter (a
# tensor of its own in PyTorch); a transposed Linear weight used by two
# MatMuls, once through Identity (one parameter used twice).
save([h.make_node("Identity", ["m.a.gain"], ["gain"]),
      h.make_node("ReduceMean", ["onnx::ReduceMean_2"], ["mean"],
                  axes=[0, 1], keepdims=0),
      h.make_node("ReduceMean", ["onnx::ReduceMean_2"], ["m1"],
                  axes=[0, 1], keepdims=1),
      h.make_node("Sub", ["onnx::ReduceMean_2", "m1"], ["d"]),
      h.make_node("Mul", ["d", "d"], ["sq"]),
      h.make_node("ReduceMean", ["sq"], ["var"], axes=[0, 1], keepdims=0),
      h.make_node("BatchNormalization",
                  ["onnx::BatchNormalization_1", "gain", "m.b.bias",
                   "mean", "var"], ["Ws"], training_mode=1, momentum=1.0),
      h.make_node("Reshape", ["Ws", "shp"], ["W"]),
      h.make_node("Conv", ["X", "W"], ["A"]),
      h.make_node("Relu", ["A"], ["R"]),
      h.make_node("Flatten", ["R"], ["F"]),
      h.make_node("Identity", ["onnx::MatMul_9"], ["W9"]),
      h.make_node("MatMul", ["F", "W9"], ["Y1"]),
      h.make_node("MatMul", ["F", "onnx::MatMul_9"], ["Y2"]),
      h.make_node("Add", ["Y1", "Y2"], ["Y"])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 4, 8, 8])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 16])],
     [nh.from_array(np.ones((1, 32, 36), np.float32),
                    "onnx::BatchNormalization_1"),
      nh.from_array(np.ones((1, 36, 32), np.float32), "onnx::ReduceMean_2"),
      nh.from_array(np.ones(32, np.float32), "m.a.gain"),
      nh.from_array(np.zeros(32, np.float32), "m.b.bias"),
      nh.from_array(np.array([32, 4, 3, 3], np.int64), "shp"),
      nh.from_array(np.zeros((1152, 16), np.float32), "onnx::MatMul_9")],
     "memest_wstd")

# A slice assignment as the exporter lowers it (MViTv2's relative position
# term): ScatterND into the data A with an int64 index grid built from
# shapes only (here ConstantOfShape), which PyTorch never allocates
# (copy_ into a view of A, in place).
save([h.make_node("Sigmoid", ["X"], ["A"]),
      h.make_node("ConstantOfShape", ["ishape"], ["I"],
                  value=nh.from_array(np.array([0], np.int64))),
      h.make_node("ScatterND", ["A", "I", "U"], ["B"]),
      h.make_node("Relu", ["B"], ["C"])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 1, 64, 64]),
      h.make_tensor_value_info("U", T.FLOAT, [1, 1, 32, 32])],
     [h.make_tensor_value_info("C", T.FLOAT, [1, 1, 64, 64])],
     [nh.from_array(np.array([1, 1, 32, 32, 4], np.int64), "ishape")],
     "memest_scatter")

# The same SDPA pattern with a bias the exporter folded into a constant
# (BEiT's relative position bias at its fixed size, "onnx::Add_<n>",
# deduplicated across blocks and read through Identity): an SDPA call
# with a float attn_mask, fused, with one scores-sized block.
save(SCALED_SCORES + [
      h.make_node("Identity", ["onnx::Add_7"], ["B"]),
      h.make_node("Add", ["S", "B"], ["Sm"]),
      h.make_node("Softmax", ["Sm"], ["P"], axis=-1),
      h.make_node("MatMul", ["P", "V"], ["O"])],
     QKV_IN, O_OUT,
     [nh.from_array(np.array(0.5, np.float32), "c"),
      nh.from_array(np.zeros((1, 2, 64, 64), np.float32), "onnx::Add_7")],
     "memest_fbias")

# Two Linear layers with a bias as the exporter writes them: MatMul by a
# weight + Add of the bias, and a Gemm with its C input
save([h.make_node("MatMul", ["X", "W"], ["M"]),
      h.make_node("Add", ["M", "b"], ["Y"]),
      h.make_node("Gemm", ["X", "W2", "c2"], ["Z"], transB=1)],
     [h.make_tensor_value_info("X", T.FLOAT, [2, 64])],
     [h.make_tensor_value_info("Y", T.FLOAT, [2, 32]),
      h.make_tensor_value_info("Z", T.FLOAT, [2, 16])],
     [nh.from_array(np.zeros((64, 32), np.float32), "W"),
      nh.from_array(np.zeros((32,), np.float32), "b"),
      nh.from_array(np.zeros((16, 64), np.float32), "W2"),
      nh.from_array(np.zeros((16,), np.float32), "c2")], "memest_linear")

# nn.GELU() as the exporter writes it at opset 17 (erf form) between two
# Linear layers: Div(H, sqrt 2) -> Erf -> Add(1) -> Mul(H, .) -> Mul(0.5).
# memest_gelu2 multiplies by another input instead of H: not a GELU.
for name, other in (("memest_gelu", "H"), ("memest_gelu2", "Z")):
    save([h.make_node("MatMul", ["X", "W1"], ["H"]),
          h.make_node("Div", ["H", "s2"], ["Dv"]),
          h.make_node("Erf", ["Dv"], ["E"]),
          h.make_node("Add", ["E", "one"], ["A"]),
          h.make_node("Mul", [other, "A"], ["M"]),
          h.make_node("Mul", ["M", "half"], ["G"]),
          h.make_node("MatMul", ["G", "W2"], ["Y"])],
         [h.make_tensor_value_info("X", T.FLOAT, [1, 256])] +
         ([h.make_tensor_value_info("Z", T.FLOAT, [1, 1024])] if other == "Z" else []),
         [h.make_tensor_value_info("Y", T.FLOAT, [1, 16])],
         [nh.from_array(np.zeros((256, 1024), np.float32), "W1"),
          nh.from_array(np.zeros((1024, 16), np.float32), "W2"),
          nh.from_array(np.array(1.4142135, np.float32), "s2"),
          nh.from_array(np.array(1.0, np.float32), "one"),
          nh.from_array(np.array(0.5, np.float32), "half")], name, strip=True)

# A leaf module whose exported ops read its input last before the module
# ends (Hugging Face's NewGELU: 0.5 * x first, x read no more after the
# cube): memest_hold names the nodes by module path as TorchScript export
# does ("/m/act/Tanh"), so the module's frame holds H until /m/act's last
# node; memest_hold_flat is the same graph without scopes.
for name, scoped in (("memest_hold", True), ("memest_hold_flat", False)):
    def nd(op, ins, outs, path):
        return h.make_node(op, ins, outs, name=path if scoped else "")
    save([nd("MatMul", ["X", "W1"], ["H"], "/m/fc/MatMul"),
          nd("Mul", ["H", "half"], ["A"], "/m/act/Mul"),
          nd("Tanh", ["H"], ["Tn"], "/m/act/Tanh"),
          nd("Add", ["Tn", "one"], ["U"], "/m/act/Add"),
          nd("Mul", ["A", "U"], ["G"], "/m/act/Mul_1"),
          nd("MatMul", ["G", "W2"], ["Y"], "/m/fc2/MatMul")],
         [h.make_tensor_value_info("X", T.FLOAT, [1, 1024])],
         [h.make_tensor_value_info("Y", T.FLOAT, [1, 16])],
         [nh.from_array(np.zeros((1024, 4096), np.float32), "W1"),
          nh.from_array(np.zeros((4096, 16), np.float32), "W2"),
          nh.from_array(np.array(1.0, np.float32), "one"),
          nh.from_array(np.array(0.5, np.float32), "half")], name, strip=True)

# A block that rebinds its variable to a constant times a module's result,
# `out = gain * attn(out)` (timm's NFNet: attn_gain * attn_last(out)):
# memest_gain scales by a Constant node's scalar, as the export writes a
# Python float; memest_gain_w by a [4096] initializer (a LayerScale's
# weight, a module's tensor), which the rule leaves alone.
for name, scalar in (("memest_gain", True), ("memest_gain_w", False)):
    gain = [h.make_node("Constant", [], ["g"], name="/m/blk/Constant",
                        value=nh.from_array(np.array(2.0, np.float32)))] \
        if scalar else []
    save([h.make_node("MatMul", ["X", "W1"], ["C"], name="/m/blk/conv3/MatMul"),
          h.make_node("ReduceMean", ["C"], ["M"], name="/m/blk/attn_last/ReduceMean",
                      axes=[1]),
          h.make_node("Sigmoid", ["M"], ["S"], name="/m/blk/attn_last/Sigmoid"),
          h.make_node("Mul", ["C", "S"], ["A"], name="/m/blk/attn_last/Mul")] +
         gain +
         [h.make_node("Mul", ["A", "g"], ["G"], name="/m/blk/Mul_1"),
          h.make_node("MatMul", ["G", "W2"], ["Y"], name="/m/fc2/MatMul")],
         [h.make_tensor_value_info("X", T.FLOAT, [1, 1024])],
         [h.make_tensor_value_info("Y", T.FLOAT, [1, 16])],
         [nh.from_array(np.zeros((1024, 4096), np.float32), "W1"),
          nh.from_array(np.zeros((4096, 16), np.float32), "W2")] +
         ([] if scalar else [nh.from_array(np.ones(4096, np.float32), "g")]),
         name, strip=True)

# A feed-forward block with ReLU (OPT's fc1 -> ReLU -> fc2): the CNN zoos
# run nn.ReLU(inplace=True), Hugging Face language models nn.ReLU() /
# F.relu, out of place; test_relu_ffn builds it without and with a
# sequence length.
save([h.make_node("MatMul", ["X", "W1"], ["H"]),
      h.make_node("Relu", ["H"], ["R"]),
      h.make_node("MatMul", ["R", "W2"], ["Y"])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 1024])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 16])],
     [nh.from_array(np.zeros((1024, 4096), np.float32), "W1"),
      nh.from_array(np.zeros((4096, 16), np.float32), "W2")],
     "memest_relu_ffn", strip=True)

# A three-layer encoder named as Hugging Face's DeBERTa-v2 exports it
# (/m/encoder/layer.<i>/attention/self/query_proj/...): its encoder keeps
# every layer's input (the embeddings' output and each layer's output)
# until it returns; memest_encoder_bert is the same graph with BERT's
# module names (attention/self/query), whose encoder frees them.
for name, proj in (("memest_encoder", "query_proj"), ("memest_encoder_bert", "query")):
    nodes, prev = [h.make_node("Mul", ["X", "c"], ["E"], name="/m/embeddings/Mul")], "E"
    for i in range(3):
        s = "/m/encoder/layer.%d/" % i
        nodes += [h.make_node("MatMul", [prev, "Wq"], ["Q%d" % i],
                              name=s + "attention/self/%s/MatMul" % proj),
                  h.make_node("Add", ["Q%d" % i, prev], ["H%d" % i],
                              name=s + "output/Add")]
        prev = "H%d" % i
    nodes.append(h.make_node("MatMul", [prev, "W2"], ["Y"], name="/m/head/MatMul"))
    save(nodes, [h.make_tensor_value_info("X", T.FLOAT, [1, 1024])],
         [h.make_tensor_value_info("Y", T.FLOAT, [1, 16])],
         [nh.from_array(np.zeros((1024, 1024), np.float32), "Wq"),
          nh.from_array(np.zeros((1024, 16), np.float32), "W2"),
          nh.from_array(np.array(2.0, np.float32), "c")], name, strip=True)

# timm's BatchNormAct2d after a pointwise Conv 16->32 whose weight carries
# the folded BatchNorm ("onnx::Conv_3"), then the erf GELU named inside the
# norm module (".../norm1/act/..."), then a dense 3x3 Conv 32->4: the
# conv output, the norm module's argument, is held beside the BatchNorm's
# and the GELU's outputs. memest_normact_blk names the GELU as the block's
# own act (".../b/act/...", a module that holds the conv): not held.
for name, act in (("memest_normact", "/m/b/norm1/act/"),
                  ("memest_normact_blk", "/m/b/act/")):
    save([h.make_node("Conv", ["X", "onnx::Conv_3"], ["A"], name="/m/b/conv1/Conv"),
          h.make_node("Div", ["A", "s2"], ["Dv"], name=act + "Div"),
          h.make_node("Erf", ["Dv"], ["E"], name=act + "Erf"),
          h.make_node("Add", ["E", "one"], ["Ap"], name=act + "Add"),
          h.make_node("Mul", ["A", "Ap"], ["M"], name=act + "Mul"),
          h.make_node("Mul", ["M", "half"], ["G"], name=act + "Mul_1"),
          h.make_node("Conv", ["G", "W2"], ["Y"], pads=[1, 1, 1, 1],
                      name="/m/b/conv2/Conv")],
         [h.make_tensor_value_info("X", T.FLOAT, [1, 16, 8, 8])],
         [h.make_tensor_value_info("Y", T.FLOAT, [1, 4, 8, 8])],
         [nh.from_array(np.zeros((32, 16, 1, 1), np.float32), "onnx::Conv_3"),
          nh.from_array(np.zeros((4, 32, 3, 3), np.float32), "W2"),
          nh.from_array(np.array(1.4142135, np.float32), "s2"),
          nh.from_array(np.array(1.0, np.float32), "one"),
          nh.from_array(np.array(0.5, np.float32), "half")], name)

# A module that concatenates its submodules' outputs and runs the result
# through leaf calls BatchNorm -> ReLU -> Conv (torchvision DenseNet's
# bn_function, and the parts list of HGNet / VoVNet): 1x1 Convs 4->4 twice
# (P1, P2), Concat (C, 8 channels), BatchNorm, in-place ReLU, Conv 8->8,
# Conv 8->4; X [1, 4, 8, 8]. In memest_densecat the module is /m/blk (its
# parts are held until its last Conv, the concatenation until conv1);
# memest_densecat_root names everything under the root scope /m, whose
# Concat parts are not held.
for name, s in (("memest_densecat", "/m/blk/"), ("memest_densecat_root", "/m/")):
    save([h.make_node("Conv", ["X", "W1"], ["P1"], name=s + "c1/Conv"),
          h.make_node("Conv", ["P1", "W2"], ["P2"], name=s + "c2/Conv"),
          h.make_node("Concat", ["P1", "P2"], ["C"], axis=1, name=s + "Concat"),
          h.make_node("BatchNormalization", ["C", "g", "b", "mu", "var"], ["B"],
                      name=s + "norm1/BatchNormalization"),
          h.make_node("Relu", ["B"], ["R"], name=s + "relu1/Relu"),
          h.make_node("Conv", ["R", "W3"], ["Y1"], name=s + "conv1/Conv"),
          h.make_node("Conv", ["Y1", "W4"], ["Y"], name=s + "conv2/Conv")],
         [h.make_tensor_value_info("X", T.FLOAT, [1, 4, 8, 8])],
         [h.make_tensor_value_info("Y", T.FLOAT, [1, 4, 8, 8])],
         [nh.from_array(np.zeros((4, 4, 1, 1), np.float32), "W1"),
          nh.from_array(np.zeros((4, 4, 1, 1), np.float32), "W2"),
          nh.from_array(np.zeros((8, 8, 1, 1), np.float32), "W3"),
          nh.from_array(np.zeros((4, 8, 1, 1), np.float32), "W4"),
          nh.from_array(np.ones(8, np.float32), "g"),
          nh.from_array(np.zeros(8, np.float32), "b"),
          nh.from_array(np.zeros(8, np.float32), "mu"),
          nh.from_array(np.ones(8, np.float32), "var")], name)

# A 7x7 convolution of a 3-channel image to 16 channels, stride 1 (DLA's
# stem, whose fp16 cuDNN workspace goes per image) and stride 2 (ResNet's,
# which takes none of it); X [batch, 3, 128, 128], the test rebinds batch
# and resolution.
for name, st in (("memest_stem7", 1), ("memest_stem7s2", 2)):
    save([h.make_node("Conv", ["X", "W"], ["Y"], pads=[3, 3, 3, 3],
                      strides=[st, st], name="/m/conv1/Conv")],
         [h.make_tensor_value_info("X", T.FLOAT, ["batch", 3, 128, 128])],
         [h.make_tensor_value_info("Y", T.FLOAT, None)],
         [nh.from_array(np.zeros((16, 3, 7, 7), np.float32), "W")], name,
         strip=True)

# Hugging Face's GPT-2 at its smallest: token and position embeddings
# (/m/wte, /m/wpe Gathers, ids [1, 8] int64 inputs) summed at the root,
# one block /m/h.0 whose attention is one MatMul (/m/h.0/attn/c_attn/),
# the residual Add, an MLP 64 -> 256 -> 64 and its residual Add.
# GPT2Model.forward holds inputs_embeds and position_embeds, GPT2Block its
# attn_output, until they return.
save([h.make_node("Gather", ["wte", "ids"], ["E"], name="/m/wte/Gather"),
      h.make_node("Gather", ["wpe", "pos"], ["Pe"], name="/m/wpe/Gather"),
      h.make_node("Add", ["E", "Pe"], ["H"], name="/m/Add"),
      h.make_node("MatMul", ["H", "Wa"], ["A1"], name="/m/h.0/attn/c_attn/MatMul"),
      h.make_node("Add", ["A1", "H"], ["R"], name="/m/h.0/Add"),
      h.make_node("MatMul", ["R", "Wf"], ["F"], name="/m/h.0/mlp/c_fc/MatMul"),
      h.make_node("MatMul", ["F", "Wp"], ["Y1"], name="/m/h.0/mlp/c_proj/MatMul"),
      h.make_node("Add", ["R", "Y1"], ["Y"], name="/m/h.0/Add_1")],
     [h.make_tensor_value_info("ids", T.INT64, [1, 8]),
      h.make_tensor_value_info("pos", T.INT64, [1, 8])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 64])],
     [nh.from_array(np.zeros((16, 64), np.float32), "wte"),
      nh.from_array(np.zeros((8, 64), np.float32), "wpe"),
      nh.from_array(np.zeros((64, 64), np.float32), "Wa"),
      nh.from_array(np.zeros((64, 256), np.float32), "Wf"),
      nh.from_array(np.zeros((256, 64), np.float32), "Wp")], "memest_gpt2",
     strip=True)

# timm's LeViT attention: scores Q K^T plus attention_biases[:, idx], the
# table [2, 16] gathered by an int64 index [16, 16] (an initializer named
# as the exporter names a folded constant), softmax, times V. In eval mode
# the module caches the gathered bias from its first call on.
save([h.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
      h.make_node("MatMul", ["Q", "Kt"], ["S"]),
      h.make_node("Gather", ["m.attn.attention_biases", "onnx::Gather_7"], ["Gb"],
                  axis=1),
      h.make_node("Add", ["S", "Gb"], ["Sb"]),
      h.make_node("Softmax", ["Sb"], ["P"], axis=-1),
      h.make_node("MatMul", ["P", "V"], ["O"])],
     [h.make_tensor_value_info(x, T.FLOAT, [1, 2, 16, 8]) for x in "QKV"],
     [h.make_tensor_value_info("O", T.FLOAT, [1, 2, 16, 8])],
     [nh.from_array(np.zeros((2, 16), np.float32), "m.attn.attention_biases"),
      nh.from_array(np.zeros((16, 16), np.int64), "onnx::Gather_7")],
     "memest_biascache")

# Two such blocks whose tables the exporter merged (timm initialises them
# to zeros): the second reads the first's through an Identity named as its
# own module's table; one Constant index serves both Gathers. PyTorch holds
# each module's table, index and cached bias.
IDX = h.make_tensor("idx", T.INT64, [16, 16], np.zeros(256, np.int64))
save([h.make_node("Constant", [], ["onnx::Gather_7"], value=IDX),
      h.make_node("Identity", ["m.b0.attn.attention_biases"],
                  ["m.b1.attn.attention_biases"]),
      h.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
      h.make_node("MatMul", ["Q", "Kt"], ["S"]),
      h.make_node("Gather", ["m.b0.attn.attention_biases", "onnx::Gather_7"],
                  ["Gb"], axis=1),
      h.make_node("Add", ["S", "Gb"], ["Sb"]),
      h.make_node("Softmax", ["Sb"], ["P"], axis=-1),
      h.make_node("MatMul", ["P", "V"], ["O1"]),
      h.make_node("MatMul", ["O1", "Kt"], ["S2"]),
      h.make_node("Gather", ["m.b1.attn.attention_biases", "onnx::Gather_7"],
                  ["Gb2"], axis=1),
      h.make_node("Add", ["S2", "Gb2"], ["Sb2"]),
      h.make_node("Softmax", ["Sb2"], ["P2"], axis=-1),
      h.make_node("MatMul", ["P2", "V"], ["O"])],
     [h.make_tensor_value_info(x, T.FLOAT, [1, 2, 16, 8]) for x in "QKV"],
     [h.make_tensor_value_info("O", T.FLOAT, [1, 2, 16, 8])],
     [nh.from_array(np.zeros((2, 16), np.float32), "m.b0.attn.attention_biases")],
     "memest_biascache_dedup")

# A window partition as SwinV2 writes it: x.view(B, H/2, 2, W/2, 2, C)
# .permute(0, 1, 3, 2, 4, 5).reshape(-1, 2, 2, C): the permuted view cannot
# be reshaped as a view, so reshape copies; then a Linear over the windows.
# The partitioned tensor comes from an out-of-place Relu of the input.
W88 = [nh.from_array(np.zeros((8, 8), np.float32), "fc.weight")]
save([h.make_node("Relu", ["X"], ["A"]),
      h.make_node("Reshape", ["A", "s6"], ["A6"]),
      h.make_node("Transpose", ["A6"], ["At"], perm=[0, 1, 3, 2, 4, 5]),
      h.make_node("Reshape", ["At", "s4"], ["Wd"]),
      h.make_node("Reshape", ["Wd", "s3"], ["Wt"]),
      h.make_node("MatMul", ["Wt", "fc.weight"], ["Y"])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 4, 4, 8])],
     [h.make_tensor_value_info("Y", T.FLOAT, [4, 4, 8])],
     W88 + [nh.from_array(np.array([1, 2, 2, 2, 2, 8], np.int64), "s6"),
            nh.from_array(np.array([4, 2, 2, 8], np.int64), "s4"),
            nh.from_array(np.array([4, 4, 8], np.int64), "s3")],
     "memest_window_copy")

# Attention scores of a permuted query against itself: T [B, N, heads, D]
# -> Transpose to [B, heads, N, D] (a view), Mul by a scale (TensorIterator
# keeps the permuted layout), MatMul with its own transpose: at::matmul
# cannot fold [2, 2] batch dims of either operand as a view and copies both.
save([h.make_node("Transpose", ["T"], ["Q"], perm=[0, 2, 1, 3]),
      h.make_node("Mul", ["Q", "c"], ["Qs"]),
      h.make_node("Transpose", ["Qs"], ["Kt"], perm=[0, 1, 3, 2]),
      h.make_node("MatMul", ["Qs", "Kt"], ["S"])],
     [h.make_tensor_value_info("T", T.FLOAT, [2, 4, 2, 8])],
     [h.make_tensor_value_info("S", T.FLOAT, [2, 2, 4, 4])],
     [nh.from_array(np.array(0.5, np.float32), "c")],
     "memest_matmul_copy")

# ResNetV2's pre-activation block by its scopes: block /m/b0 binds
# P = norm1(x) (a Relu here), reads it in downsample and conv1, then conv2,
# and adds the shortcut: the local P lives until the block returns.
W1 = [nh.from_array(np.zeros((8, 8, 1, 1), np.float32), n)
      for n in ("down.weight", "conv1.weight", "conv2.weight")]
save([h.make_node("Relu", ["X"], ["P"], name="/m/b0/norm1/Relu"),
      h.make_node("Conv", ["P", "down.weight"], ["S"], name="/m/b0/down/Conv"),
      h.make_node("Conv", ["P", "conv1.weight"], ["C1"], name="/m/b0/conv1/Conv"),
      h.make_node("Conv", ["C1", "conv2.weight"], ["C2"], name="/m/b0/conv2/Conv"),
      h.make_node("Add", ["C2", "S"], ["Y"], name="/m/b0/Add")],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 8, 4, 4])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 4, 4])], W1,
     "memest_shared_local")

# timm's GroupNormAct as exported: conv, Reshape to [B, G, -1],
# InstanceNormalization, Reshape back, Mul(gamma), Add(beta), then SiLU
# (Sigmoid, Mul): one native_group_norm and an in-place SiLU in PyTorch.
save([h.make_node("Conv", ["X", "conv.weight"], ["C"]),
      h.make_node("Reshape", ["C", "sg"], ["Cg"]),
      h.make_node("InstanceNormalization", ["Cg", "in.s", "in.b"], ["N"]),
      h.make_node("Reshape", ["N", "sb"], ["Nb"]),
      h.make_node("Mul", ["Nb", "gn.weight"], ["G"]),
      h.make_node("Add", ["G", "gn.bias"], ["Gb"]),
      h.make_node("Sigmoid", ["Gb"], ["Sg"]),
      h.make_node("Mul", ["Gb", "Sg"], ["Y"])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 8, 4, 4])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 4, 4])],
     [nh.from_array(np.zeros((8, 8, 1, 1), np.float32), "conv.weight"),
      nh.from_array(np.array([1, 2, -1], np.int64), "sg"),
      nh.from_array(np.array([1, 8, 4, 4], np.int64), "sb"),
      nh.from_array(np.ones(2, np.float32), "in.s"),
      nh.from_array(np.zeros(2, np.float32), "in.b"),
      nh.from_array(np.ones((8, 1, 1), np.float32), "gn.weight"),
      nh.from_array(np.zeros((8, 1, 1), np.float32), "gn.bias")],
     "memest_group_norm")

# An int64 tensor between two floats: Cast to int64 and back. At half
# precision the float blocks halve, the int64 one does not.
save([h.make_node("Cast", ["X"], ["I"], to=T.INT64),
      h.make_node("Cast", ["I"], ["Y"], to=T.FLOAT)],
     [h.make_tensor_value_info("X", T.FLOAT, [4, 64])],
     [h.make_tensor_value_info("Y", T.FLOAT, [4, 64])], [],
     "memest_int64")

# A float tensor built from a shape alone (torch.ones: float32 whatever
# the module's precision) times the input.
save([h.make_node("ConstantOfShape", ["shp"], ["M"],
                  value=nh.from_array(np.array([1.0], np.float32))),
      h.make_node("Mul", ["X", "M"], ["Y"])],
     [h.make_tensor_value_info("X", T.FLOAT, [4, 64])],
     [h.make_tensor_value_info("Y", T.FLOAT, [4, 64])],
     [nh.from_array(np.array([4, 64], np.int64), "shp")],
     "memest_const_float")

# A Linear with a bias over a 4-D input, as torchvision's ConvNeXt block
# runs its MLP on [N, H, W, C]: MatMul by a weight, Add of the bias (PyTorch:
# matmul, then add_ in place); and the same over a permuted input (a
# Transpose's output: matmul copies it to a contiguous block first)
LIN4 = [nh.from_array(np.zeros((16, 64), np.float32), "fc.weight"),
        nh.from_array(np.zeros((64,), np.float32), "fc.bias")]
save([h.make_node("MatMul", ["X", "fc.weight"], ["M"]),
      h.make_node("Add", ["M", "fc.bias"], ["Y"]),
      h.make_node("Relu", ["Y"], ["Z"])],
     [h.make_tensor_value_info("X", T.FLOAT, [2, 8, 8, 16])],
     [h.make_tensor_value_info("Z", T.FLOAT, [2, 8, 8, 64])], LIN4,
     "memest_linear4d")
save([h.make_node("Transpose", ["X"], ["P"], perm=[0, 2, 3, 1]),
      h.make_node("MatMul", ["P", "fc.weight"], ["M"]),
      h.make_node("Add", ["M", "fc.bias"], ["Y"]),
      h.make_node("Relu", ["Y"], ["Z"])],
     [h.make_tensor_value_info("X", T.FLOAT, [2, 16, 8, 8])],
     [h.make_tensor_value_info("Z", T.FLOAT, [2, 8, 8, 64])], LIN4,
     "memest_linear4d_perm")

# A channels-last block's input as ConvNeXt's downsampling gets it: an NHWC
# tensor permuted back to NCHW (a view with channels-last strides), then a
# dense 2x2 stride-2 Conv 16 -> 32 (the fp32 workspace model's cl feature).
save([h.make_node("Transpose", ["X"], ["P"], perm=[0, 3, 1, 2]),
      h.make_node("Conv", ["P", "W"], ["Y"], strides=[2, 2])],
     [h.make_tensor_value_info("X", T.FLOAT, [2, 8, 8, 16])],
     [h.make_tensor_value_info("Y", T.FLOAT, [2, 32, 4, 4])],
     [nh.from_array(np.zeros((32, 16, 2, 2), np.float32), "W")],
     "memest_conv_cl")

# A 2x2 stride-2 MaxPool of X [1, 8, 16, 16]: PyTorch's CUDA max_pool2d
# allocates int64 indices while it runs; and the same pool exported with
# its indices output (a graph value of its own).
save([h.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[2, 2], strides=[2, 2])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 8, 16, 16])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 8, 8])], [], "memest_maxpool")
save([h.make_node("MaxPool", ["X"], ["Y", "I"], kernel_shape=[2, 2], strides=[2, 2])],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 8, 16, 16])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 8, 8]),
      h.make_tensor_value_info("I", T.INT64, [1, 8, 8, 8])], [], "memest_maxpool_idx")

# Locals a timm module keeps until it returns (feat.c, hold_branch_locals
# and the conv_mid rule of hold_module_inputs). memest_mobileone: a
# MobileOneBlock /m/b0 without an identity: B = conv_scale(X), C = B + 0,
# E = conv_kxk.0(X), F = C + E, Sigmoid; X [1, 8, 4, 4] (512 B a tensor).
W8 = lambda n: nh.from_array(np.zeros((8, 8, 1, 1), np.float32), n)
save([h.make_node("Conv", ["X", "ws"], ["B"], name="/m/b0/conv_scale/conv/Conv"),
      h.make_node("Add", ["B", "zero"], ["C"], name="/m/b0/Add"),
      h.make_node("Conv", ["X", "wk"], ["E"], name="/m/b0/conv_kxk.0/conv/Conv"),
      h.make_node("Add", ["C", "E"], ["F"], name="/m/b0/Add_1"),
      h.make_node("Sigmoid", ["F"], ["Y"], name="/m/b0/act/Sigmoid")],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 8, 4, 4])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 4, 4])],
     [W8("ws"), W8("wk"), nh.from_array(np.array(0.0, np.float32), "zero")],
     "memest_mobileone")
# memest_csp: a CrossStage3 /m/s0: E = conv_exp(X) [1, 8, 4, 4], split in
# two views E1, E2 [1, 4, 4, 4], B1 = blocks(E1), C = Concat(B1, E2),
# Y = conv_transition(C).
save([h.make_node("Conv", ["X", "we"], ["E"], name="/m/s0/conv_exp/conv/Conv"),
      h.make_node("Split", ["E", "sp"], ["E1", "E2"], axis=1, name="/m/s0/Split"),
      h.make_node("Conv", ["E1", "wb"], ["B1"], name="/m/s0/blocks/blocks.0/conv/Conv"),
      h.make_node("Concat", ["B1", "E2"], ["C"], axis=1, name="/m/s0/Concat"),
      h.make_node("Conv", ["C", "wt"], ["Y"], name="/m/s0/conv_transition/conv/Conv")],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 8, 4, 4])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 8, 4, 4])],
     [W8("we"), W8("wt"), nh.from_array(np.zeros((4, 4, 1, 1), np.float32), "wb"),
      nh.from_array(np.array([4, 4], np.int64), "sp")], "memest_csp")
# memest_osa: a VoVNet OSA block /m/b0 whose conv_mid appends M0, M1 to
# the block's list [X] and concatenates it; conv_concat, then attn.
# X [1, 4, 4, 4] (256 B).
W4 = lambda n, c=4: nh.from_array(np.zeros((4, c, 1, 1), np.float32), n)
save([h.make_node("Conv", ["X", "w0"], ["M0"], name="/m/b0/conv_mid/conv_mid.0/Conv"),
      h.make_node("Conv", ["M0", "w1"], ["M1"], name="/m/b0/conv_mid/conv_mid.1/Conv"),
      h.make_node("Concat", ["X", "M0", "M1"], ["C"], axis=1, name="/m/b0/conv_mid/Concat"),
      h.make_node("Conv", ["C", "wc"], ["Z"], name="/m/b0/conv_concat/Conv"),
      h.make_node("Conv", ["Z", "wa"], ["Y"], name="/m/b0/attn/Conv")],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 4, 4, 4])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 4, 4, 4])],
     [W4("w0"), W4("w1"), W4("wc", 12), W4("wa")], "memest_osa")
# memest_star: a StarNet block /m/b0: D = dwconv(X), A1, A2 = f1(D), f2(D)
# [1, 8, 4, 4] (512 B), P = sigmoid(A1) * A2, Z = dwconv2(g(P)), Y = X + Z;
# X [1, 4, 4, 4] (256 B).
save([h.make_node("Conv", ["X", "wd"], ["D"], name="/m/b0/dwconv/Conv"),
      h.make_node("Conv", ["D", "w1"], ["A1"], name="/m/b0/f1/Conv"),
      h.make_node("Conv", ["D", "w2"], ["A2"], name="/m/b0/f2/Conv"),
      h.make_node("Sigmoid", ["A1"], ["R"], name="/m/b0/act/Sigmoid"),
      h.make_node("Mul", ["R", "A2"], ["P"], name="/m/b0/Mul"),
      h.make_node("Conv", ["P", "wg"], ["G"], name="/m/b0/g/Conv"),
      h.make_node("Conv", ["G", "wz"], ["Z"], name="/m/b0/dwconv2/Conv"),
      h.make_node("Add", ["X", "Z"], ["Y"], name="/m/b0/Add")],
     [h.make_tensor_value_info("X", T.FLOAT, [1, 4, 4, 4])],
     [h.make_tensor_value_info("Y", T.FLOAT, [1, 4, 4, 4])],
     [W4("wd"), nh.from_array(np.zeros((8, 4, 1, 1), np.float32), "w1"),
      nh.from_array(np.zeros((8, 4, 1, 1), np.float32), "w2"),
      W4("wg", 8), W4("wz")], "memest_star")

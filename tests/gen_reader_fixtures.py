#!/usr/bin/python3
"""gen_reader_fixtures.py — writes the ONNX reader's test fixtures.

Writes tiny models into tests/fixtures/reader/ (each well under 64 KiB) and,
next to each NAME.onnx, NAME.json: what the onnx package (the oracle) says
the file holds — per graph (main and every subgraph, by path): nodes with
inputs/outputs/attributes, graph inputs/outputs, and every named tensor with
dtype, dims (ints, symbol names, or null for unknown), flags, stored bytes
and small constant contents. tests/test_onnx.c reads the models with
dlperf's reader and compares against the JSON.

Run:  /usr/bin/python3 tests/gen_reader_fixtures.py
(needs Debian's python3-onnx and python3-torch; output is deterministic.)
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "reader")
MAX_CONST_ELEMS = 65536   # graph.h DLP_MAX_CONST_ELEMS (ints)
MAX_FLOAT_CONST = 1024    # onnx.h DLP_ONNX_MAX_FLOAT_CONST
FLOAT_TYPES = {1, 10, 11, 16}
INT_TYPES = {2, 3, 4, 5, 6, 7, 9, 12, 13}


def dtype_size(dt):
    return {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8,
            12: 4, 13: 8, 14: 8, 15: 16, 16: 2}.get(dt, 0)


def type_dims(tp):
    """dims of a TypeProto: list of int / str / None, or None (no rank)."""
    if not tp.HasField("tensor_type"):
        return 0, None
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return tt.elem_type, None
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(d.dim_value)
        elif d.HasField("dim_param") and d.dim_param:
            dims.append(d.dim_param)
        else:
            dims.append(None)
    if len(dims) > 8:
        return tt.elem_type, None
    return tt.elem_type, dims


def tensor_contents(t, base_dir):
    """Small constant contents as a flat list, or None when unknown/big."""
    dt = t.data_type
    numel = int(np.prod(t.dims)) if len(t.dims) else 1
    if dt in INT_TYPES:
        lim = MAX_CONST_ELEMS
    elif dt in FLOAT_TYPES:
        lim = MAX_FLOAT_CONST
    else:
        return None
    if numel > lim:
        return None
    if t.data_location == TensorProto.EXTERNAL or len(t.external_data):
        if dt not in INT_TYPES or base_dir is None:
            return None
        info = {e.key: e.value for e in t.external_data}
        path = os.path.join(base_dir, info["location"])
        if not os.path.exists(path):
            return None
        t2 = TensorProto()
        t2.CopyFrom(t)
        onnx.external_data_helper.load_external_data_for_tensor(t2, base_dir)
        t2.data_location = TensorProto.DEFAULT
        del t2.external_data[:]
        t = t2
    arr = numpy_helper.to_array(t).reshape(-1)
    if dt in INT_TYPES:
        return [int(x) for x in arr]
    return [float(x) for x in arr.astype(np.float64)]


def attr_json(a, path, graphs, base_dir):
    j = {"type": int(a.type)}
    if a.type == onnx.AttributeProto.INT:
        j["i"] = a.i
    elif a.type == onnx.AttributeProto.FLOAT:
        j["f"] = a.f
    elif a.type == onnx.AttributeProto.STRING:
        j["s"] = a.s.decode()
    elif a.type == onnx.AttributeProto.INTS:
        j["ints"] = list(a.ints)
    elif a.type == onnx.AttributeProto.FLOATS:
        j["floats"] = list(a.floats)
    elif a.type == onnx.AttributeProto.STRINGS:
        j["strings"] = [s.decode() for s in a.strings]
    elif a.type == onnx.AttributeProto.TENSOR:
        t = a.t
        j["tensor"] = {"dtype": t.data_type, "dims": list(t.dims),
                       "const": tensor_contents(t, base_dir)}
    elif a.type == onnx.AttributeProto.GRAPH:
        j["graph"] = path
    return j


def graph_json(g, path, parent_scopes, graphs, base_dir, opset_domain_ok):
    vals = {}

    def val(name):
        if name not in vals:
            vals[name] = {"dtype": 0, "shape": None, "flags": [],
                          "stored_bytes": 0, "const": None}
        return vals[name]

    init_names = set()
    for t in g.initializer:
        v = val(t.name)
        init_names.add(t.name)
        v["dtype"] = t.data_type
        v["shape"] = list(t.dims) if len(t.dims) <= 8 else None
        v["flags"].append("initializer")
        numel = int(np.prod(t.dims)) if len(t.dims) else 1
        v["stored_bytes"] = numel * dtype_size(t.data_type)
        if t.data_location == TensorProto.EXTERNAL:
            v["flags"].append("external")
        v["const"] = tensor_contents(t, base_dir)
    for st in g.sparse_initializer:
        t = st.values
        v = val(t.name)
        init_names.add(t.name)
        v["dtype"] = t.data_type
        v["shape"] = list(st.dims)
        v["flags"].append("initializer")
        nnz = int(np.prod(t.dims)) if len(t.dims) else 1
        nidx = int(np.prod(st.indices.dims)) if len(st.indices.dims) else 1
        v["stored_bytes"] = (nnz * dtype_size(t.data_type) +
                             nidx * dtype_size(st.indices.data_type))
    inputs = []
    for vi in g.input:
        v = val(vi.name)
        if vi.name not in init_names:
            v["flags"].append("input")
            inputs.append(vi.name)
            dt, dims = type_dims(vi.type)
            v["dtype"], v["shape"] = dt, dims
    for vi in g.value_info:
        v = val(vi.name)
        dt, dims = type_dims(vi.type)
        if dt:
            v["dtype"] = dt
        if dims is not None:
            v["shape"] = dims
    local = set(init_names) | set(inputs)
    nodes = []
    for k, n in enumerate(g.node):
        for o in n.output:
            if o:
                local.add(o)
    for k, n in enumerate(g.node):
        attrs = {}
        for a in n.attribute:
            sub = None
            if a.type == onnx.AttributeProto.GRAPH:
                sub = "%s/%s/%s" % (path, n.name or "#%d" % k, a.name)
                graph_json(a.g, sub, parent_scopes + [local | set(vals)],
                           graphs, base_dir, opset_domain_ok)
            attrs[a.name] = attr_json(a, sub, graphs, base_dir)
        for i in n.input:
            if i:
                val(i)
        for o in n.output:
            if o:
                val(o)
        nodes.append({"name": n.name, "op_type": n.op_type,
                      "domain": "" if n.domain in ("", "ai.onnx") else n.domain,
                      "inputs": list(n.input), "outputs": list(n.output),
                      "attrs": attrs})
        if n.op_type == "Constant" and n.output and n.output[0]:
            v = val(n.output[0])
            for a in n.attribute:
                if a.name == "value":
                    v["dtype"] = a.t.data_type
                    v["shape"] = list(a.t.dims)
                    v["const"] = tensor_contents(a.t, base_dir)
                elif a.name in ("value_int", "value_ints"):
                    v["dtype"] = TensorProto.INT64
                    v["const"] = [a.i] if a.name == "value_int" else list(a.ints)
                    v["shape"] = [] if a.name == "value_int" else [len(a.ints)]
                elif a.name in ("value_float", "value_floats"):
                    v["dtype"] = TensorProto.FLOAT
                    fl = [a.f] if a.name == "value_float" else list(a.floats)
                    v["const"] = [float(np.float32(x)) for x in fl]
                    v["shape"] = [] if a.name == "value_float" else [len(a.floats)]
    outputs = []
    for vi in g.output:
        v = val(vi.name)
        v["flags"].append("output")
        outputs.append(vi.name)
        dt, dims = type_dims(vi.type)
        if dt and not v["dtype"]:
            v["dtype"] = dt
        if dims is not None and "initializer" not in v["flags"]:
            v["shape"] = dims
    graphs.append({"path": path, "name": g.name, "nodes": nodes,
                   "inputs": inputs, "outputs": outputs, "values": vals,
                   "_local": local})


def mark_outer(graphs):
    """Names a subgraph uses without defining: resolved in the nearest
    enclosing scope that defines them; dtype/shape copied from there when
    the subgraph itself does not say."""
    by_path = {gj["path"]: gj for gj in graphs}
    for gj in sorted(graphs, key=lambda x: x["path"].count("/")):
        if gj["path"] == "main":
            continue
        for name, v in gj["values"].items():
            if name in gj["_local"] or v["const"] is not None:
                continue
            p = gj["path"]
            while p != "main":
                p = p.rsplit("/", 2)[0]
                pg = by_path[p]
                pv = pg["values"].get(name)
                if pv is not None and (name in pg["_local"] or
                                       "outer" in pv["flags"]):
                    v["flags"].append("outer")
                    if not v["dtype"]:
                        v["dtype"] = pv["dtype"]
                    if v["shape"] is None:
                        v["shape"] = pv["shape"]
                    break
    for gj in graphs:
        del gj["_local"]


def describe(model, base_dir):
    opset = next(o.version for o in model.opset_import
                 if o.domain in ("", "ai.onnx"))
    graphs = []
    graph_json(model.graph, "main", [], graphs, base_dir, True)
    mark_outer(graphs)
    params = 0
    syms = set()
    for t in model.graph.initializer:
        if t.data_type in FLOAT_TYPES:
            params += int(np.prod(t.dims)) if len(t.dims) else 1
    for st in model.graph.sparse_initializer:  # dense element count
        if st.values.data_type in FLOAT_TYPES:
            params += int(np.prod(st.dims))
    for gj in graphs:
        for v in gj["values"].values():
            for d in v["shape"] or []:
                if isinstance(d, str):
                    syms.add(d)
    total_nodes = sum(len(gj["nodes"]) for gj in graphs)
    return {"opset": opset, "ir_version": model.ir_version,
            "graphs": graphs, "params": params, "total_nodes": total_nodes,
            "symbols": sorted(syms)}


def save(model, name, external=None, keep_data=True, check=True):
    path = os.path.join(OUT, name + ".onnx")
    if check:
        onnx.checker.check_model(model)
    if external:
        data = name + ".data"
        if os.path.exists(os.path.join(OUT, data)):
            os.remove(os.path.join(OUT, data))
        onnx.save_model(model, path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location=data,
                        size_threshold=external)
    else:
        onnx.save_model(model, path)
    m2 = onnx.load(path, load_external_data=False)
    desc = describe(m2, OUT)
    if external and not keep_data:
        os.remove(os.path.join(OUT, name + ".data"))
        desc = describe(m2, OUT)
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(desc, f, indent=1, sort_keys=True)
    size = os.path.getsize(path)
    assert size < 64 * 1024, (name, size)
    print("wrote %s (%d bytes)" % (path, size))


# ---- the models --------------------------------------------------------------

def torch_small_cnn():
    """A real torch export: Conv/BN/Relu/Pool/Flatten/Gemm with raw_data
    weights and a dynamic batch axis."""
    import io
    import torch
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(4)
            self.fc = torch.nn.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x)))
            y = torch.nn.functional.max_pool2d(y, 2)
            return self.fc(y.flatten(1))

    net = Net().eval()
    buf = io.BytesIO()
    torch.onnx.export(net, torch.randn(2, 3, 8, 8), buf, opset_version=17,
                      input_names=["x"], output_names=["output"],
                      dynamic_axes={"x": {0: "batch"}, "output": {0: "batch"}},
                      do_constant_folding=False)
    return onnx.load_from_string(buf.getvalue())


def typed_weights():
    """Initializers stored in the typed fields (float_data, int64_data,
    int32_data for int8/bool/float16, double_data, uint64_data)."""
    inits = [
        helper.make_tensor("w_f32", TensorProto.FLOAT, [2, 3],
                           [0.5, -1.0, 2.25, 3.0, -4.5, 1e-3]),
        helper.make_tensor("shape_i64", TensorProto.INT64, [2], [3, -1]),
        helper.make_tensor("w_i8", TensorProto.INT8, [4], [-128, -1, 0, 127]),
        helper.make_tensor("w_bool", TensorProto.BOOL, [3], [True, False, True]),
        helper.make_tensor("w_f16", TensorProto.FLOAT16, [3],
                           np.array([1.5, -2.0, 65504.0], dtype=np.float16)),
        helper.make_tensor("w_f64", TensorProto.DOUBLE, [2], [1.0 / 3, -7.25]),
        helper.make_tensor("w_u64", TensorProto.UINT64, [2], [7, 2**40]),
        helper.make_tensor("w_i32", TensorProto.INT32, [2, 2], [1, -2, 3, -4]),
        helper.make_tensor("scalar_i64", TensorProto.INT64, [], [42]),
        helper.make_tensor("w_bf16", TensorProto.BFLOAT16, [3],
                           [1.0, -2.5, 3.140625]),
        helper.make_tensor("w_u8", TensorProto.UINT8, [3], [0, 200, 255]),
        helper.make_tensor("w_i16", TensorProto.INT16, [2], [-300, 300]),
        helper.make_tensor("raw_bf16", TensorProto.BFLOAT16, [2],
                           np.array([0x3f80, 0xc020], dtype="<u2").tobytes(),
                           raw=True),
        helper.make_tensor("raw_u32", TensorProto.UINT32, [2],
                           np.array([1, 4000000000], dtype="<u4").tobytes(),
                           raw=True),
        helper.make_tensor("raw_bool", TensorProto.BOOL, [3],
                           np.array([1, 0, 1], dtype="u1").tobytes(), raw=True),
        helper.make_tensor("raw_f64", TensorProto.DOUBLE, [2],
                           np.array([0.1, -1e300], dtype="<f8").tobytes(),
                           raw=True),
        helper.make_tensor("empty_i64", TensorProto.INT64, [0], []),
        helper.make_tensor("raw_f16", TensorProto.FLOAT16, [2],
                           np.array([0.25, -3.0], dtype=np.float16).tobytes(),
                           raw=True),
        helper.make_tensor("raw_i64", TensorProto.INT64, [3],
                           np.array([1, -2, 1 << 33], dtype="<i8").tobytes(),
                           raw=True),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])
    nodes = [
        helper.make_node("Add", ["x", "w_f32"], ["s"], name="add"),
        helper.make_node("Reshape", ["s", "shape_i64"], ["y"], name="reshape"),
    ]
    g = helper.make_graph(nodes, "typed", [x], [y], initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def external_model():
    """Two big float weights and a 200-element int64 index tensor, moved to
    external data by size threshold; a small shape constant stays inline."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((16, 16)).astype(np.float32), "W")
    idx = numpy_helper.from_array(np.arange(200, dtype=np.int64) * 3 - 7, "idx")
    b = numpy_helper.from_array(np.zeros(16, dtype=np.float32), "B")
    shp = numpy_helper.from_array(np.array([-1, 16], dtype=np.int64), "shp")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])
    i = helper.make_tensor_value_info("emb_in", TensorProto.FLOAT, [300, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [200, 4])
    nodes = [
        helper.make_node("Gemm", ["x", "W", "B"], ["g"], name="gemm", transB=1),
        helper.make_node("Reshape", ["g", "shp"], ["y"], name="reshape"),
        helper.make_node("Gather", ["emb_in", "idx"], ["z"], name="gather", axis=0),
    ]
    g = helper.make_graph(nodes, "ext", [x, i], [y, z],
                          initializer=[w, idx, b, shp])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def constant_model():
    t = helper.make_tensor("c", TensorProto.INT64, [3], [2, 3, 4])
    nodes = [
        helper.make_node("Constant", [], ["c_tensor"], name="k_tensor", value=t),
        helper.make_node("Constant", [], ["c_int"], name="k_int", value_int=7),
        helper.make_node("Constant", [], ["c_ints"], name="k_ints",
                         value_ints=[0, -1]),
        helper.make_node("Constant", [], ["c_float"], name="k_float",
                         value_float=0.125),
        helper.make_node("Constant", [], ["c_floats"], name="k_floats",
                         value_floats=[1.5, 2.5]),
        helper.make_node("Constant", [], ["c_big"], name="k_big",
                         value=numpy_helper.from_array(
                             np.ones((40, 40), dtype=np.float32), "big")),
        helper.make_node("Reshape", ["x", "c_tensor"], ["r"], name="reshape"),
        helper.make_node("Unsqueeze", ["r", "c_ints"], ["u"], name="unsq"),
        helper.make_node("Mul", ["u", "c_float"], ["m"], name="mul"),
        helper.make_node("Add", ["m", "c_floats"], ["y"], name="add"),
        helper.make_node("Add", ["c_int", "c_tensor"], ["ci"], name="add_int"),
        helper.make_node("MatMul", ["c_big", "c_big"], ["y2"], name="mm"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [24])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 4, 2])
    y2 = helper.make_tensor_value_info("y2", TensorProto.FLOAT, [40, 40])
    ci = helper.make_tensor_value_info("ci", TensorProto.INT64, [3])
    g = helper.make_graph(nodes, "consts", [x], [y, y2, ci])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def if_model():
    """If with two branches reading an outer tensor; the then-branch holds a
    Loop whose body reads a main-graph tensor two scopes up."""
    outer_w = numpy_helper.from_array(np.array([2.0, 3.0], dtype=np.float32), "ow")
    # Loop body: (iter, cond, acc) -> (cond, acc * ow)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="bid"),
         helper.make_node("Mul", ["acc_in", "ow"], ["acc_out"], name="bmul")],
        "loop_body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2])])
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "ow"], ["t1"], name="then_add"),
         helper.make_node("Constant", [], ["trip"], name="then_trip",
                          value=helper.make_tensor("tv", TensorProto.INT64, [], [3])),
         helper.make_node("Loop", ["trip", "", "t1"], ["t_out"], name="loop",
                          body=body)],
        "then_branch", [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Sub", ["x", "ow"], ["e_out"], name="else_sub")],
        "else_branch", [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="gt"),
        helper.make_node("If", ["c"], ["y"], name="if",
                         then_branch=then_g, else_branch=else_g),
    ]
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    g = helper.make_graph(
        nodes, "ifgraph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        initializer=[outer_w, zero])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def value_info_model():
    """A torch export with symbolic dims, completed by onnx shape inference
    so it carries value_info for intermediate tensors."""
    import io
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 6)
            self.lin = torch.nn.Linear(6, 6)

        def forward(self, ids):
            h = self.lin(self.emb(ids))
            return torch.softmax(h, dim=-1).transpose(0, 1)

    torch.manual_seed(0)
    buf = io.BytesIO()
    torch.onnx.export(Net().eval(), torch.zeros(2, 5, dtype=torch.long), buf,
                      opset_version=17, input_names=["ids"],
                      output_names=["output"],
                      dynamic_axes={"ids": {0: "batch", 1: "seq"},
                                    "output": {0: "seq", 1: "batch"}})
    m = onnx.load_from_string(buf.getvalue())
    m = onnx.shape_inference.infer_shapes(m)
    assert len(m.graph.value_info) > 0
    return m


def opset_model(version):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["y"], name="pool",
                              kernel_shape=[2, 2], strides=[2, 2],
                              auto_pad="NOTSET", pads=[0, 0, 0, 0])]
    g = helper.make_graph(nodes, "opset%d" % version, [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", version)])
    m.ir_version = 3 if version == 7 else 10
    return m


def ir3_initializer_inputs():
    """Old style (IR 3): initializers are also listed as graph inputs; they
    must not count as inputs. Also a sparse initializer and a node in the
    'ai.onnx' spelled domain plus a custom-domain node."""
    w = numpy_helper.from_array(np.ones((3, 3), dtype=np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])
    wi = helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 3])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm",
                              domain="ai.onnx"),
             helper.make_node("MyOp", ["m"], ["y"], name="custom",
                              domain="com.example", alpha=0.5,
                              names=["a", "bc"], mode="fast")]
    sp = helper.make_sparse_tensor(
        helper.make_tensor("sp", TensorProto.FLOAT, [2], [1.0, 2.0]),
        helper.make_tensor("sp_idx", TensorProto.INT64, [2], [0, 7]), [3, 3])
    nodes.append(helper.make_node("Add", ["y0", "sp"], ["y"], name="addsp"))
    nodes[1].output[0] = "y0"
    g = helper.make_graph(nodes, "ir3", [x, wi], [y], initializer=[w],
                          sparse_initializer=[sp])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9),
                                            helper.make_opsetid("com.example", 1)])
    m.ir_version = 3
    return m


def functions_model():
    """A model-local function (FunctionProto) called twice: the reader keeps
    the calls as nodes of a custom domain and warns that they are not
    expanded."""
    fn = helper.make_function(
        "custom.fn", "LinearRelu", ["a", "w"], ["out"],
        [helper.make_node("MatMul", ["a", "w"], ["mm"]),
         helper.make_node("Relu", ["mm"], ["out"])],
        [helper.make_opsetid("", 17)])
    w = numpy_helper.from_array(np.eye(4, dtype=np.float32), "w")
    nodes = [helper.make_node("LinearRelu", ["x", "w"], ["h"], name="call1",
                              domain="custom.fn"),
             helper.make_node("LinearRelu", ["h", "w"], ["y"], name="call2",
                              domain="custom.fn")]
    g = helper.make_graph(
        nodes, "fn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[w])
    return helper.make_model(g, functions=[fn],
                             opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("custom.fn", 1)])


def main():
    os.makedirs(OUT, exist_ok=True)
    save(torch_small_cnn(), "raw_weights")
    save(typed_weights(), "typed_weights")
    save(external_model(), "external_present", external=1024)
    save(external_model(), "external_absent", external=1024, keep_data=False)
    save(constant_model(), "constants")
    save(if_model(), "if_outer")
    save(value_info_model(), "value_info")
    save(opset_model(7), "opset7", check=False)
    save(opset_model(21), "opset21", check=False)
    save(ir3_initializer_inputs(), "ir3_inputs", check=False)
    save(functions_model(), "functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())

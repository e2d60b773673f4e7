#!/usr/bin/python3
"""test_nn_parity.py — PyTorch parity of the C graph-learning engine.

Calls src/nn through ctypes on $DLP_BUILD/libdlperf.so and compares every
layer (forward output and all gradients), every loss, the optimizers and
schedules, and a whole DIPPM-style model (3 SAGE + 3 FC layers with static
features: output, gradients and a 20-step Adam loss curve) with reference
implementations written here in plain PyTorch (no PyTorch Geometric): the
reference runs in float64 from the same float32 inputs, the C engine in
float32; the bound is 1e-4 relative (max abs error / max abs reference).
Prints "N passed, N failed".
"""
import ctypes as C
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import warnings

warnings.filterwarnings("ignore", message="scatter_reduce")

torch.set_num_threads(1)
BUILD = os.environ.get("DLP_BUILD", "build")
try:
    lib = C.CDLL(os.path.join(BUILD, "libdlperf.so"))
except OSError as e:  # no library: one failure, still a result line
    print("FAIL cannot load %s/libdlperf.so: %s" % (BUILD, e))
    print("0 passed, 1 failed")
    sys.exit(1)

passed = failed = 0
RTOL = 1e-4


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok", name, detail)
    else:
        failed += 1
        print("FAIL", name, detail)


def rel(c, t):
    c = np.asarray(c, dtype=np.float64)
    t = t.detach().double().numpy() if torch.is_tensor(t) else np.asarray(t, np.float64)
    assert c.shape == t.shape, (c.shape, t.shape)
    if c.size == 0:
        return 0.0
    return float(np.max(np.abs(c - t)) / max(np.max(np.abs(t)), 1e-12))


def close(name, pairs, tol=RTOL):
    """pairs: list of (label, c_array, torch_tensor)."""
    worst = max((rel(c, t), lab) for lab, c, t in pairs)
    check(name, worst[0] <= tol, "worst %s rel %.3g" % (worst[1], worst[0]))


# ---- ctypes plumbing --------------------------------------------------------
def P(a):
    assert a.flags["C_CONTIGUOUS"]
    return C.c_void_p(a.ctypes.data)


def f32(*shape, scale=1.0, rng=None):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def z32(*shape):
    return np.zeros(shape, np.float32)


class GraphDesc(C.Structure):
    _fields_ = [("n_nodes", C.c_int), ("n_edges", C.c_int),
                ("src", C.c_void_p), ("dst", C.c_void_p), ("ptr", C.c_void_p)]


class Graph(C.Structure):
    _fields_ = [("n_nodes", C.c_int), ("n_edges", C.c_int), ("n_graphs", C.c_int)] + \
        [(n, C.c_void_p) for n in ("in_ptr", "in_src", "out_ptr", "out_dst", "out_eid",
                                   "graph_ptr", "node_graph", "loops", "node_w")]


class Err(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * 512)]


class SageCfg(C.Structure):
    _fields_ = [("I", C.c_int), ("O", C.c_int), ("normalize", C.c_bool)]


class GatCfg(C.Structure):
    _fields_ = [("I", C.c_int), ("C", C.c_int), ("H", C.c_int), ("concat", C.c_bool),
                ("slope", C.c_float), ("dropout", C.c_float)]


class GatSaved(C.Structure):
    _fields_ = [(n, C.c_void_p) for n in ("h", "as_", "ad", "alpha", "mask")]


class TensorInfo(C.Structure):
    _fields_ = [("name", C.c_char * 48), ("off", C.c_size_t), ("n", C.c_size_t),
                ("rows", C.c_int), ("cols", C.c_int)]


class Params(C.Structure):
    _fields_ = [("t", TensorInfo * 256), ("n_tensors", C.c_int), ("n", C.c_size_t),
                ("w", C.POINTER(C.c_float)), ("g", C.POINTER(C.c_float)),
                ("m", C.POINTER(C.c_float)), ("v", C.POINTER(C.c_float)),
                ("step", C.c_long)]


class Opt(C.Structure):
    _fields_ = [("kind", C.c_int), ("lr", C.c_double), ("momentum", C.c_double),
                ("beta1", C.c_double), ("beta2", C.c_double), ("eps", C.c_double),
                ("weight_decay", C.c_double)]


class SageModelCfg(C.Structure):
    _fields_ = [("in_dim", C.c_int), ("hidden", C.c_int), ("n_sage", C.c_int),
                ("static_dim", C.c_int), ("n_fc", C.c_int), ("fc_hidden", C.c_int),
                ("out_dim", C.c_int), ("pool", C.c_int), ("normalize", C.c_bool)]


for fn in ("dlp_nn_mse_loss", "dlp_nn_rmse_loss", "dlp_nn_huber_loss", "dlp_nn_mape_loss",
           "dlp_nn_bce_logits_loss", "dlp_nn_cross_entropy_loss", "dlp_nn_sce_loss",
           "dlp_nn_clip_grad_norm", "dlp_nn_lr_cosine", "dlp_nn_lr_one_cycle"):
    getattr(lib, fn).restype = C.c_double
lib.dlp_nn_lr_cosine.argtypes = [C.c_double, C.c_double, C.c_long, C.c_long]
lib.dlp_nn_lr_one_cycle.argtypes = [C.c_double, C.c_long, C.c_long, C.c_double,
                                    C.c_double, C.c_double]
lib.dlp_nn_sage_model_new.restype = C.c_void_p
lib.dlp_nn_sage_model_new.argtypes = [C.POINTER(SageModelCfg), C.c_uint64, C.POINTER(Err)]
lib.dlp_nn_sage_model_params.restype = C.POINTER(Params)
lib.dlp_nn_sage_model_params.argtypes = [C.c_void_p]
lib.dlp_nn_sage_model_delete.argtypes = [C.c_void_p]
lib.dlp_nn_sage_model_forward.argtypes = [C.c_void_p, C.POINTER(Graph), C.c_void_p,
                                          C.c_void_p, C.c_void_p, C.POINTER(Err)]
lib.dlp_nn_sage_model_train_step.argtypes = [C.c_void_p, C.POINTER(Graph), C.c_void_p,
                                             C.c_void_p, C.c_void_p, C.POINTER(Opt),
                                             C.c_double, C.POINTER(C.c_double), C.POINTER(Err)]
lib.dlp_nn_sage_model_backward.argtypes = [C.c_void_p, C.POINTER(Graph), C.c_void_p,
                                           C.c_void_p, C.c_void_p]


class Batch:
    """Graphs packed by the C engine, plus the same batch as torch indices."""

    def __init__(self, graphs, undirected=False):
        self.keep = []
        descs = (GraphDesc * len(graphs))()
        srcs, dsts, batch, off = [], [], [], 0
        for k, (n, s, d) in enumerate(graphs):
            s = np.ascontiguousarray(s, np.int32)
            d = np.ascontiguousarray(d, np.int32)
            self.keep += [s, d]
            descs[k] = GraphDesc(n, len(s), s.ctypes.data if len(s) else None,
                                 d.ctypes.data if len(d) else None)
            es, ed = [], []
            for a, b in zip(s, d):
                es.append(a); ed.append(b)
                if undirected and a != b:
                    es.append(b); ed.append(a)
            srcs.append(np.array(es, np.int64) + off)
            dsts.append(np.array(ed, np.int64) + off)
            batch += [k] * n
            off += n
        self.g = Graph()
        err = Err()
        rc = lib.dlp_nn_graph_build(C.byref(self.g), descs, None, len(graphs),
                                    1 if undirected else 0, C.byref(err))
        assert rc == 0, err.msg
        self.N, self.G = off, len(graphs)
        src = np.concatenate(srcs) if srcs else np.zeros(0, np.int64)
        dst = np.concatenate(dsts) if dsts else np.zeros(0, np.int64)
        order = np.argsort(dst, kind="stable")       # the C in-CSR order
        self.src = torch.from_numpy(src[order])
        self.dst = torch.from_numpy(dst[order])
        self.batch = torch.tensor(batch, dtype=torch.int64)
        self.E = len(src)

    def free(self):
        lib.dlp_nn_graph_free(C.byref(self.g))


def random_graphs(rng, sizes, extra=True):
    """DAG-like graphs (a chain plus skip edges); the first one gets a hub of
    300 in-neighbours, self-loops, a duplicate edge and isolated nodes."""
    out = []
    for k, n in enumerate(sizes):
        s, d = [], []
        for i in range(1, n):
            s.append(int(rng.integers(0, i))); d.append(i)
            if rng.random() < 0.5:
                s.append(int(rng.integers(0, i))); d.append(i)
        if extra and k == 0 and n >= 320:
            for j in range(1, 301):
                s.append(j); d.append(0)
            s += [5, 7, 2, 2]; d += [5, 7, 3, 3]
            # nodes n-5..n-1 isolated: drop their edges
            keep = [(a, b) for a, b in zip(s, d) if a < n - 5 and b < n - 5]
            s, d = [a for a, _ in keep], [b for _, b in keep]
        out.append((n, s, d))
    return out


def T(a, grad=True):
    return torch.tensor(np.asarray(a, np.float64), requires_grad=grad)


# ---- torch reference layers -------------------------------------------------
def ref_mean_agg(b, x):
    N = x.shape[0]
    agg = torch.zeros(N, x.shape[1], dtype=x.dtype).index_add(0, b.dst, x[b.src])
    deg = torch.zeros(N, dtype=x.dtype).index_add(0, b.dst, torch.ones(b.E, dtype=x.dtype))
    return agg / deg.clamp(min=1).unsqueeze(1)


def ref_sage(b, x, Wl, bl, Wr, normalize):
    out = ref_mean_agg(b, x) @ Wl.T + bl + x @ Wr.T
    return F.normalize(out, p=2.0, dim=-1) if normalize else out


def with_self_loops(b):
    keep = b.src != b.dst
    loop = torch.arange(b.N)
    return torch.cat([b.src[keep], loop]), torch.cat([b.dst[keep], loop])


def ref_gcn(b, x, W, bias):
    s, d = with_self_loops(b)
    deg = torch.zeros(b.N, dtype=x.dtype).index_add(0, d, torch.ones(len(d), dtype=x.dtype))
    norm = deg[s].pow(-0.5) * deg[d].pow(-0.5)
    h = x @ W.T
    return torch.zeros_like(h).index_add(0, d, norm.unsqueeze(1) * h[s]) + bias


def ref_gat(b, x, W, att_s, att_d, bias, H, Cc, concat, slope, ae=None, mask=None):
    s, d = with_self_loops(b)
    h = (x @ W.T).view(-1, H, Cc)
    a_s = (h * att_s.view(1, H, Cc)).sum(-1)
    a_d = (h * att_d.view(1, H, Cc)).sum(-1)
    logit = a_s[s] + a_d[d]
    if ae is not None:  # C slots: in-CSR edges (loops skipped), then one per node
        logit = logit + torch.cat([ae[:b.E][b.src != b.dst], ae[b.E:]])
    e = F.leaky_relu(logit, slope)                              # [E', H]
    m = torch.zeros(b.N, H, dtype=x.dtype).scatter_reduce(
        0, d.unsqueeze(1).expand(-1, H), e, reduce="amax", include_self=False)
    ex = torch.exp(e - m[d])
    den = torch.zeros(b.N, H, dtype=x.dtype).index_add(0, d, ex)
    alpha = ex / den[d]
    if mask is not None:  # attention dropout with the engine's mask
        alpha = alpha * torch.cat([mask[:b.E][b.src != b.dst], mask[b.E:]])
    out = torch.zeros(b.N, H, Cc, dtype=x.dtype).index_add(0, d, alpha.unsqueeze(-1) * h[s])
    out = out.reshape(b.N, H * Cc) if concat else out.mean(1)
    return out + bias


def ref_pool(b, x, kind):
    Gn = b.G
    if kind == 2:
        idx = b.batch.unsqueeze(1).expand(-1, x.shape[1])
        return torch.zeros(Gn, x.shape[1], dtype=x.dtype).scatter_reduce(
            0, idx, x, reduce="amax", include_self=False)
    s = torch.zeros(Gn, x.shape[1], dtype=x.dtype).index_add(0, b.batch, x)
    if kind == 1:
        cnt = torch.bincount(b.batch, minlength=Gn).to(x.dtype).clamp(min=1)
        s = s / cnt.unsqueeze(1)
    return s


# ---- layer tests --------------------------------------------------------------
rng = np.random.default_rng(42)
B = Batch(random_graphs(rng, [330, 40, 1, 0, 17]))
N = B.N
gp = C.byref(B.g)


def test_linear():
    n, i, o = 33, 7, 5
    x, W, b_, R = f32(n, i, rng=rng), f32(o, i, rng=rng), f32(o, rng=rng), f32(n, o, rng=rng)
    out, dx, dW, db = z32(n, o), z32(n, i), z32(o, i), z32(o)
    lib.dlp_nn_linear_forward(P(out), P(x), P(W), P(b_), n, i, o)
    lib.dlp_nn_linear_backward(P(dx), P(dW), P(db), P(R), P(x), P(W), n, i, o)
    tx, tW, tb = T(x), T(W), T(b_)
    to = F.linear(tx, tW, tb)
    (to * T(R, False)).sum().backward()
    close("linear", [("out", out, to), ("dx", dx, tx.grad), ("dW", dW, tW.grad), ("db", db, tb.grad)])


def test_sage(normalize, bt=None):
    bt = bt or B
    N, gp = bt.N, C.byref(bt.g)
    I, O = 6, 5
    x, Wl, bl, Wr = f32(N, I, rng=rng), f32(O, I, rng=rng), f32(O, rng=rng), f32(O, I, rng=rng)
    R = f32(N, O, rng=rng)
    out, agg, pre, nrm = z32(N, O), z32(N, I), z32(N, O), z32(N)
    dx, dWl, dbl, dWr, w1, w2 = z32(N, I), z32(O, I), z32(O), z32(O, I), z32(N, I), z32(N, O)
    cfg = SageCfg(I, O, normalize)
    lib.dlp_nn_sage_forward(P(out), P(agg), P(pre), P(nrm), P(x), P(Wl), P(bl), P(Wr), gp, cfg)
    lib.dlp_nn_sage_backward(P(dx), P(dWl), P(dbl), P(dWr), P(w1), P(w2), P(R), P(out), P(agg),
                             P(nrm), P(x), P(Wl), P(Wr), gp, cfg)
    tx, tWl, tbl, tWr = T(x), T(Wl), T(bl), T(Wr)
    to = ref_sage(bt, tx, tWl, tbl, tWr, normalize)
    (to * T(R, False)).sum().backward()
    close("sage normalize=%s%s" % (normalize, " undirected" if bt is not B else ""), [("out", out, to), ("dx", dx, tx.grad),
                                            ("dWl", dWl, tWl.grad), ("dbl", dbl, tbl.grad),
                                            ("dWr", dWr, tWr.grad)])


def test_sage_undirected():
    gs = random_graphs(rng, [50, 30, 1])
    bu = Batch(gs, undirected=True)
    directed = sum(sum(1 for a, b_ in zip(s_, d_) if a != b_) for _, s_, d_ in gs)
    loops = sum(sum(1 for a, b_ in zip(s_, d_) if a == b_) for _, s_, d_ in gs)
    check("undirected batch doubles non-loop edges",
          bu.g.n_edges == bu.E == 2 * directed + loops, "%d %d" % (bu.g.n_edges, bu.E))
    test_sage(False, bu)
    bu.free()


def test_gcn():
    I, O = 6, 4
    x, W, b_, R = f32(N, I, rng=rng), f32(O, I, rng=rng), f32(O, rng=rng), f32(N, O, rng=rng)
    out, h, dx, dW, db, ws = z32(N, O), z32(N, O), z32(N, I), z32(O, I), z32(O), z32(N, O)
    lib.dlp_nn_gcn_forward(P(out), P(h), P(x), P(W), P(b_), gp, I, O)
    lib.dlp_nn_gcn_backward(P(dx), P(dW), P(db), P(ws), P(R), P(x), P(W), gp, I, O)
    tx, tW, tb = T(x), T(W), T(b_)
    to = ref_gcn(B, tx, tW, tb)
    (to * T(R, False)).sum().backward()
    close("gcn", [("out", out, to), ("dx", dx, tx.grad), ("dW", dW, tW.grad), ("db", db, tb.grad)])


def test_gin():
    Fd, Hh, O = 5, 8, 3
    eps = 0.25
    x, W1, b1, W2, b2 = (f32(N, Fd, rng=rng), f32(Hh, Fd, rng=rng), f32(Hh, rng=rng),
                         f32(O, Hh, rng=rng), f32(O, rng=rng))
    R = f32(N, O, rng=rng)
    z, u, r, out = z32(N, Fd), z32(N, Hh), z32(N, Hh), z32(N, O)
    lib.dlp_nn_gin_forward(P(z), P(x), C.c_float(eps), gp, Fd)
    lib.dlp_nn_linear_forward(P(u), P(z), P(W1), P(b1), N, Fd, Hh)
    lib.dlp_nn_act_forward(P(r), P(u), C.c_size_t(N * Hh), 0, C.c_float(0))
    lib.dlp_nn_linear_forward(P(out), P(r), P(W2), P(b2), N, Hh, O)
    dr, du, dz, dx = z32(N, Hh), z32(N, Hh), z32(N, Fd), z32(N, Fd)
    dW1, db1, dW2, db2 = z32(Hh, Fd), z32(Hh), z32(O, Hh), z32(O)
    deps = np.zeros(1, np.float32)
    lib.dlp_nn_linear_backward(P(dr), P(dW2), P(db2), P(R), P(r), P(W2), N, Hh, O)
    lib.dlp_nn_act_backward(P(du), P(dr), P(u), P(r), C.c_size_t(N * Hh), 0, C.c_float(0))
    lib.dlp_nn_linear_backward(P(dz), P(dW1), P(db1), P(du), P(z), P(W1), N, Fd, Hh)
    lib.dlp_nn_gin_backward(P(dx), P(deps), P(dz), P(x), C.c_float(eps), gp, Fd)
    tx, teps, tW1, tb1, tW2, tb2 = T(x), T([eps]), T(W1), T(b1), T(W2), T(b2)
    agg = torch.zeros_like(tx).index_add(0, B.dst, tx[B.src])
    to = F.linear(F.relu(F.linear((1 + teps) * tx + agg, tW1, tb1)), tW2, tb2)
    (to * T(R, False)).sum().backward()
    close("gin + mlp", [("out", out, to), ("dx", dx, tx.grad), ("deps", deps, teps.grad),
                        ("dW1", dW1, tW1.grad), ("db2", db2, tb2.grad)])


class Rng(C.Structure):
    _fields_ = [("s", C.c_uint64 * 4)]


def test_gat(concat, edge_logits=False, dropout=0.0):
    I, Cc, H = 6, 4, 3
    OD = H * Cc if concat else Cc
    E = B.E
    x, W, a_s, a_d, bias = (f32(N, I, rng=rng), f32(H * Cc, I, rng=rng, scale=0.5),
                            f32(H, Cc, rng=rng), f32(H, Cc, rng=rng), f32(OD, rng=rng))
    R = f32(N, OD, rng=rng)
    ae = f32(E + N, H, rng=rng) if edge_logits else None
    dae = z32(E + N, H)
    out = z32(N, OD)
    sv = [z32(N, H * Cc), z32(N, H), z32(N, H), z32(E + N, H)]
    mask = z32(E + N, H)
    saved = GatSaved(*[a.ctypes.data for a in sv], mask.ctypes.data if dropout else None)
    cfg = GatCfg(I, Cc, H, concat, 0.2, dropout)
    aep = P(ae) if edge_logits else None
    r = Rng()
    lib.dlp_nn_rng_seed(C.byref(r), C.c_uint64(17))
    lib.dlp_nn_gat_forward(P(out), saved, P(x), P(W), P(a_s), P(a_d), P(bias), aep, gp, cfg,
                           C.byref(r) if dropout else None)
    if dropout:
        kept = float(np.mean(mask > 0))
        check("gat dropout keeps ~1-p of the attention", abs(kept - (1 - dropout)) < 0.03,
              "kept %.3f" % kept)
    dx, dW, das, dad, db = z32(N, I), z32(H * Cc, I), z32(H, Cc), z32(H, Cc), z32(OD)
    dh, de = z32(N, H * Cc), z32(E + 3 * N, H)
    lib.dlp_nn_gat_backward(P(dx), P(dW), P(das), P(dad), P(db), P(dae) if edge_logits else None,
                            P(dh), P(de), P(R), saved, P(x), P(W), P(a_s), P(a_d), aep, gp, cfg)
    tx, tW, tas, tad, tb = T(x), T(W), T(a_s), T(a_d), T(bias)
    tae = T(ae) if edge_logits else None
    to = ref_gat(B, tx, tW, tas, tad, tb, H, Cc, concat, 0.2, tae,
                 torch.from_numpy(mask.astype(np.float64)) if dropout else None)
    (to * T(R, False)).sum().backward()
    pairs = [("out", out, to), ("dx", dx, tx.grad), ("dW", dW, tW.grad),
             ("datt_src", das, tas.grad), ("datt_dst", dad, tad.grad), ("dbias", db, tb.grad)]
    if edge_logits:
        pairs.append(("dae", dae, tae.grad))
    close("gat concat=%s edge_logits=%s dropout=%g" % (concat, edge_logits, dropout), pairs)


def test_lstm():
    Fd, Hd, E = 5, 6, B.E
    x = f32(N, Fd, rng=rng)
    Wih, Whh = f32(4 * Hd, Fd, rng=rng, scale=0.4), f32(4 * Hd, Hd, rng=rng, scale=0.4)
    bih, bhh = f32(4 * Hd, rng=rng, scale=0.4), f32(4 * Hd, rng=rng, scale=0.4)
    R = f32(2, E, Hd, rng=rng)
    xe, hs, cs, gates = z32(2, E, Fd), z32(2, E, Hd), z32(2, E, Hd), z32(2, E, 4 * Hd)
    lib.dlp_nn_edge_pairs_forward(P(xe), P(x), gp, Fd)
    lib.dlp_nn_lstm_forward(P(hs), P(cs), P(gates), P(xe), P(Wih), P(Whh), P(bih), P(bhh),
                            2, E, Fd, Hd)
    dxe, dx = z32(2, E, Fd), z32(N, Fd)
    dWih, dWhh, dbih, dbhh, ws = z32(4 * Hd, Fd), z32(4 * Hd, Hd), z32(4 * Hd), z32(4 * Hd), z32(6 * E * Hd)
    lib.dlp_nn_lstm_backward(P(dxe), P(dWih), P(dWhh), P(dbih), P(dbhh), P(ws), P(R), P(hs),
                             P(cs), P(gates), P(xe), P(Wih), P(Whh), 2, E, Fd, Hd)
    lib.dlp_nn_edge_pairs_backward(P(dx), P(dxe), gp, Fd)
    lstm = torch.nn.LSTM(Fd, Hd).double()
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(Wih)); lstm.weight_hh_l0.copy_(torch.from_numpy(Whh))
        lstm.bias_ih_l0.copy_(torch.from_numpy(bih)); lstm.bias_hh_l0.copy_(torch.from_numpy(bhh))
    tx = T(x)
    seq = torch.stack([tx[B.src], tx[B.dst]])                  # [2, E, F]
    to, _ = lstm(seq)
    (to * T(R, False)).sum().backward()
    close("lstm edge encoder", [("hs", hs, to), ("dx", dx, tx.grad),
                                ("dWih", dWih, lstm.weight_ih_l0.grad),
                                ("dWhh", dWhh, lstm.weight_hh_l0.grad),
                                ("dbih", dbih, lstm.bias_ih_l0.grad),
                                ("dbhh", dbhh, lstm.bias_hh_l0.grad)])


def test_norms():
    n, c = 37, 6
    for train in (True, False):
        x, g, b_, R = f32(n, c, rng=rng, scale=2), f32(c, rng=rng), f32(c, rng=rng), f32(n, c, rng=rng)
        rm, rv = f32(c, rng=rng), np.abs(f32(c, rng=rng)) + 0.5
        trm, trv = torch.tensor(rm, dtype=torch.float64), torch.tensor(rv, dtype=torch.float64)
        out, mean, rstd, dx, dg, db = z32(n, c), z32(c), z32(c), z32(n, c), z32(c), z32(c)
        lib.dlp_nn_batchnorm_forward(P(out), P(mean), P(rstd), P(x), P(g), P(b_), P(rm), P(rv),
                                     C.c_bool(train), C.c_float(0.1), C.c_float(1e-5), n, c)
        lib.dlp_nn_batchnorm_backward(P(dx), P(dg), P(db), P(R), P(x), P(mean), P(rstd), P(g),
                                      C.c_bool(train), n, c)
        tx, tg, tb = T(x), T(g), T(b_)
        to = F.batch_norm(tx, trm, trv, tg, tb, training=train, momentum=0.1, eps=1e-5)
        (to * T(R, False)).sum().backward()
        close("batchnorm train=%s" % train, [("out", out, to), ("dx", dx, tx.grad), ("dgamma", dg, tg.grad),
                                             ("dbeta", db, tb.grad), ("running_mean", rm, trm),
                                             ("running_var", rv, trv)])
    x, g, b_, R = f32(n, c, rng=rng, scale=2), f32(c, rng=rng), f32(c, rng=rng), f32(n, c, rng=rng)
    out, mean, rstd, dx, dg, db = z32(n, c), z32(n), z32(n), z32(n, c), z32(c), z32(c)
    lib.dlp_nn_layernorm_forward(P(out), P(mean), P(rstd), P(x), P(g), P(b_), C.c_float(1e-5), n, c)
    lib.dlp_nn_layernorm_backward(P(dx), P(dg), P(db), P(R), P(x), P(mean), P(rstd), P(g), n, c)
    tx, tg, tb = T(x), T(g), T(b_)
    to = F.layer_norm(tx, (c,), tg, tb, 1e-5)
    (to * T(R, False)).sum().backward()
    close("layernorm", [("out", out, to), ("dx", dx, tx.grad), ("dgamma", dg, tg.grad), ("dbeta", db, tb.grad)])
    x, R = f32(N, c, rng=rng), f32(N, c, rng=rng)
    out, dx = z32(N, c), z32(N, c)
    lib.dlp_nn_graphsizenorm_forward(P(out), P(x), gp, c)
    lib.dlp_nn_graphsizenorm_backward(P(dx), P(R), gp, c)
    tx = T(x)
    cnt = torch.bincount(B.batch, minlength=B.G).double()
    to = tx / cnt[B.batch].sqrt().unsqueeze(1)
    (to * T(R, False)).sum().backward()
    close("graphsizenorm", [("out", out, to), ("dx", dx, tx.grad)])


def test_activations():
    n = 200
    refs = [(0, 0.0, F.relu), (1, 0.1, lambda t: F.leaky_relu(t, 0.1)),
            (2, 1.3, lambda t: F.elu(t, 1.3)), (3, 0.0, F.gelu), (4, 0.0, torch.sigmoid),
            (5, 0.0, torch.tanh)]
    names = ["relu", "leaky_relu", "elu", "gelu", "sigmoid", "tanh"]
    for (k, alpha, fn), nm in zip(refs, names):
        x, R = f32(n, rng=rng, scale=2), f32(n, rng=rng)
        out, dx = z32(n), z32(n)
        lib.dlp_nn_act_forward(P(out), P(x), C.c_size_t(n), k, C.c_float(alpha))
        lib.dlp_nn_act_backward(P(dx), P(R), P(x), P(out), C.c_size_t(n), k, C.c_float(alpha))
        tx = T(x)
        to = fn(tx)
        (to * T(R, False)).sum().backward()
        close("activation " + nm, [("out", out, to), ("dx", dx, tx.grad)])
    for npar in (1, 8):
        x, a, R = f32(25, 8, rng=rng), np.abs(f32(npar, rng=rng)) * 0.3, f32(25, 8, rng=rng)
        out, dx, da = z32(25, 8), z32(25, 8), z32(npar)
        lib.dlp_nn_prelu_forward(P(out), P(x), P(a), npar, 25, 8)
        lib.dlp_nn_prelu_backward(P(dx), P(da), P(R), P(x), P(a), npar, 25, 8)
        tx, ta = T(x), T(a)
        to = F.prelu(tx, ta)
        (to * T(R, False)).sum().backward()
        close("prelu np=%d" % npar, [("out", out, to), ("dx", dx, tx.grad), ("da", da, ta.grad)])


def test_dropout():
    n, p = 4000, 0.25
    x, R = f32(n, rng=rng), f32(n, rng=rng)
    out, mask, dx = z32(n), z32(n), z32(n)
    r = Rng()
    lib.dlp_nn_rng_seed(C.byref(r), C.c_uint64(3))
    lib.dlp_nn_dropout_forward(P(out), P(mask), P(x), C.c_size_t(n), C.c_float(p), C.byref(r))
    lib.dlp_nn_dropout_backward(P(dx), P(R), P(mask), C.c_size_t(n))
    kept = mask > 0
    check("dropout keeps ~1-p, scales by 1/(1-p)",
          abs(kept.mean() - (1 - p)) < 0.03 and np.allclose(mask[kept], 1 / (1 - p)),
          "kept %.3f" % kept.mean())
    tx = T(x)
    tm = torch.from_numpy(mask.astype(np.float64))
    to = tx * tm  # F.dropout with the engine's mask
    (to * T(R, False)).sum().backward()
    close("dropout", [("out", out, to), ("dx", dx, tx.grad)])


def test_masking():
    n, Fd = 300, 6
    x, tok, R = f32(n, Fd, rng=rng), f32(Fd, rng=rng), f32(n, Fd, rng=rng)
    idx = np.zeros(n, np.int32)
    r = Rng()
    lib.dlp_nn_rng_seed(C.byref(r), C.c_uint64(8))
    K = lib.dlp_nn_mask_select(P(idx), n, C.c_double(0.25), C.byref(r))
    out, dx, dtok = z32(n, Fd), z32(n, Fd), z32(Fd)
    lib.dlp_nn_mask_forward(P(out), P(x), P(tok), P(idx), K, n, Fd)
    lib.dlp_nn_mask_backward(P(dx), P(dtok), P(R), P(idx), K, n, Fd)
    g, dgx = z32(K, Fd), z32(n, Fd)
    lib.dlp_nn_gather_rows_forward(P(g), P(x), P(idx), K, Fd)
    Rk = R[:K].copy()  # keep a reference: P() does not
    lib.dlp_nn_gather_rows_backward(P(dgx), P(Rk), P(idx), K, Fd)
    sel = torch.from_numpy(idx[:K].astype(np.int64))
    tx, tt = T(x), T(tok)
    keep = torch.ones(n, 1, dtype=torch.float64)
    keep[sel] = 0
    to = tx * keep + (1 - keep) * tt          # x with the masked rows replaced
    (to * T(R, False)).sum().backward()
    tg = T(x)
    tgo = tg[sel]
    (tgo * T(R[:K], False)).sum().backward()
    check("mask selects round(rate*N) distinct sorted nodes",
          K == 75 and len(set(idx[:K])) == K and np.all(np.diff(idx[:K]) > 0), str(K))
    close("feature masking + row gather", [("out", out, to), ("dx", dx, tx.grad), ("dtoken", dtok, tt.grad),
                                           ("gather", g, tgo), ("dgather", dgx, tg.grad)])


def test_pool_concat():
    Fd = 7
    for kind, nm in ((0, "sum"), (1, "mean"), (2, "max")):
        x, R = f32(N, Fd, rng=rng), f32(B.G, Fd, rng=rng)
        out, dx = z32(B.G, Fd), z32(N, Fd)
        arg = np.zeros((B.G, Fd), np.int32)
        lib.dlp_nn_pool_forward(P(out), P(arg), P(x), gp, Fd, kind)
        lib.dlp_nn_pool_backward(P(dx), P(R), P(arg), gp, Fd, kind, None, None)
        tx = T(x)
        to = ref_pool(B, tx, kind)
        (to * T(R, False)).sum().backward()
        close("pool " + nm, [("out", out, to), ("dx", dx, tx.grad)])
    # the weighted readouts, node_w summing to 1 per graph: [mean | sum w x]
    # (3, mean+cost) and [mean | log sum w exp(x)] (4, mean+lse; torch's
    # logsumexp of x + log w); an empty graph pools to 0
    w = rng.random(N).astype(np.float32) + 0.05
    bt = B.batch.numpy()
    for gi in range(B.G):
        w[bt == gi] /= w[bt == gi].sum()
    B.g.node_w = w.ctypes.data
    for kind, nm in ((3, "mean+cost"), (4, "mean+lse")):
        x, R = f32(N, Fd, rng=rng, scale=3), f32(B.G, 2 * Fd, rng=rng)
        out, dx = z32(B.G, 2 * Fd), z32(N, Fd)
        arg = np.zeros((B.G, Fd), np.int32)
        lib.dlp_nn_pool_forward(P(out), P(arg), P(x), gp, Fd, kind)
        lib.dlp_nn_pool_backward(P(dx), P(R), P(arg), gp, Fd, kind, P(x), P(out))
        tx, tw = T(x), T(w, False)
        parts = []
        for gi in range(B.G):
            sel = torch.from_numpy(np.nonzero(bt == gi)[0])
            if len(sel) == 0:
                parts.append(torch.zeros(2 * Fd, dtype=tx.dtype))
                continue
            xs, ws = tx[sel], tw[sel].unsqueeze(1)
            second = (ws * xs).sum(0) if kind == 3 else torch.logsumexp(xs + ws.log(), 0)
            parts.append(torch.cat([xs.mean(0), second]))
        to = torch.stack(parts)
        (to * T(R, False)).sum().backward()
        close("pool " + nm, [("out", out, to), ("dx", dx, tx.grad)])
    B.g.node_w = None
    a, b_, R = f32(5, 3, rng=rng), f32(5, 4, rng=rng), f32(5, 7, rng=rng)
    out, da, db = z32(5, 7), z32(5, 3), z32(5, 4)
    lib.dlp_nn_concat_forward(P(out), P(a), P(b_), 5, 3, 4)
    lib.dlp_nn_concat_backward(P(da), P(db), P(R), 5, 3, 4)
    ta, tb = T(a), T(b_)
    to = torch.cat([ta, tb], 1)
    (to * T(R, False)).sum().backward()
    close("concat", [("out", out, to), ("da", da, ta.grad), ("db", db, tb.grad)])


def test_losses():
    n = 50
    p, y = f32(n, rng=rng, scale=2), f32(n, rng=rng)
    yb = (rng.random(n) < 0.4).astype(np.float32)
    lab = rng.integers(0, 5, 10).astype(np.int32)
    logits = f32(10, 5, rng=rng, scale=2)
    xs, ys = f32(10, 5, rng=rng), f32(10, 5, rng=rng)

    def ref_sce(a, b_, g):
        return (1 - (F.normalize(a, dim=-1) * F.normalize(b_, dim=-1)).sum(-1)).pow(g).mean()

    cases = [
        ("mse", lambda d: lib.dlp_nn_mse_loss(P(d), P(p), P(y), n), p,
         lambda t: F.mse_loss(t, T(y, False))),
        ("rmse", lambda d: lib.dlp_nn_rmse_loss(P(d), P(p), P(y), n), p,
         lambda t: F.mse_loss(t, T(y, False)).sqrt()),
        ("huber", lambda d: lib.dlp_nn_huber_loss(P(d), P(p), P(y), n, C.c_double(0.8)), p,
         lambda t: F.huber_loss(t, T(y, False), delta=0.8)),
        ("mape", lambda d: lib.dlp_nn_mape_loss(P(d), P(p), P(y), n, C.c_double(1e-3)), p,
         lambda t: ((t - T(y, False)).abs() / T(y, False).abs().clamp(min=1e-3)).mean()),
        ("bce_logits", lambda d: lib.dlp_nn_bce_logits_loss(P(d), P(p), P(yb), n), p,
         lambda t: F.binary_cross_entropy_with_logits(t, T(yb, False))),
        ("cross_entropy", lambda d: lib.dlp_nn_cross_entropy_loss(P(d), P(logits), P(lab), 10, 5), logits,
         lambda t: F.cross_entropy(t, torch.from_numpy(lab).long())),
        ("sce gamma=2", lambda d: lib.dlp_nn_sce_loss(P(d), P(xs), P(ys), 10, 5, C.c_double(2.0)), xs,
         lambda t: ref_sce(t, T(ys, False), 2.0)),
    ]
    for nm, cfn, inp, tfn in cases:
        d = np.zeros_like(inp)
        lc = cfn(d)
        ti = T(inp)
        lt = tfn(ti)
        lt.backward()
        close("loss " + nm, [("loss", np.array([lc]), lt.reshape(1)), ("grad", d, ti.grad)])


def new_params(n):
    prm = Params()
    lib.dlp_nn_params_add(C.byref(prm), b"w", n, 1)
    err = Err()
    assert lib.dlp_nn_params_alloc(C.byref(prm), C.byref(err)) == 0
    return prm


def test_optimizers():
    n, steps = 40, 6
    w0 = f32(n, rng=rng)
    grads = [f32(n, rng=rng) for _ in range(steps)]
    lr = 0.05
    cases = [
        ("sgd momentum", Opt(0, lr, 0.9, 0.9, 0.999, 1e-8, 0.01),
         lambda p: torch.optim.SGD([p], lr=lr, momentum=0.9, weight_decay=0.01)),
        ("adam", Opt(1, lr, 0, 0.9, 0.999, 1e-8, 0.01),
         lambda p: torch.optim.Adam([p], lr=lr, weight_decay=0.01)),
        ("adamw", Opt(2, lr, 0, 0.85, 0.99, 1e-8, 0.1),
         lambda p: torch.optim.AdamW([p], lr=lr, betas=(0.85, 0.99), weight_decay=0.1)),
    ]
    for nm, o, mk in cases:
        prm = new_params(n)
        wv = np.ctypeslib.as_array(prm.w, (n,))
        gv = np.ctypeslib.as_array(prm.g, (n,))
        wv[:] = w0
        tp = torch.tensor(w0.astype(np.float64), requires_grad=True)
        opt = mk(tp)
        for g in grads:
            gv[:] = g
            lib.dlp_nn_opt_step(C.byref(prm), C.byref(o))
            tp.grad = torch.tensor(g.astype(np.float64))
            opt.step()
        close("optimizer " + nm, [("w", wv.copy(), tp)])
        lib.dlp_nn_params_free(C.byref(prm))
    # gradient clipping
    prm = new_params(n)
    gv = np.ctypeslib.as_array(prm.g, (n,))
    gv[:] = grads[0] * 3
    tp = torch.zeros(n, dtype=torch.float64, requires_grad=True)
    tp.grad = torch.tensor(gv.astype(np.float64))
    tn = torch.nn.utils.clip_grad_norm_([tp], 1.5)
    cn = lib.dlp_nn_clip_grad_norm(C.byref(prm), C.c_double(1.5))
    close("clip_grad_norm", [("norm", np.array([cn]), tn.reshape(1)), ("g", gv.copy(), tp.grad)])
    lib.dlp_nn_params_free(C.byref(prm))


def test_schedules():
    total = 50
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    sch = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=total, pct_start=0.3,
                                              div_factor=25.0, final_div_factor=1e4,
                                              anneal_strategy="cos", cycle_momentum=False)
    ref, ours = [], []
    for t in range(total):
        ref.append(opt.param_groups[0]["lr"])
        ours.append(lib.dlp_nn_lr_one_cycle(0.1, t, total, 0.3, 25.0, 1e4))
        opt.step(); sch.step()
    close("one-cycle schedule", [("lr", np.array(ours), torch.tensor(ref, dtype=torch.float64))], tol=1e-9)
    opt = torch.optim.SGD([p], lr=0.1)
    sch = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total, eta_min=0.001)
    ref, ours = [], []
    for t in range(total):
        ref.append(opt.param_groups[0]["lr"])
        ours.append(lib.dlp_nn_lr_cosine(0.1, 0.001, t, total))
        opt.step(); sch.step()
    close("cosine schedule", [("lr", np.array(ours), torch.tensor(ref, dtype=torch.float64))], tol=1e-9)


# ---- the DIPPM-style model ---------------------------------------------------
class RefDippm(torch.nn.Module):
    """3 SAGE(mean, root weight) + ReLU, global mean pool, concat static
    features, 3 Linear (ReLU between) — DIPPM's network, written here."""

    def __init__(self, in_dim, hidden, static_dim, fc_hidden, out_dim, n_sage=3, n_fc=3):
        super().__init__()
        self.wl, self.bl, self.wr = (torch.nn.ParameterList() for _ in range(3))
        for l in range(n_sage):
            d = in_dim if l == 0 else hidden
            self.wl.append(torch.nn.Parameter(torch.zeros(hidden, d)))
            self.bl.append(torch.nn.Parameter(torch.zeros(hidden)))
            self.wr.append(torch.nn.Parameter(torch.zeros(hidden, d)))
        dims = [hidden + static_dim] + [fc_hidden] * (n_fc - 1) + [out_dim]
        self.fc = torch.nn.ModuleList(torch.nn.Linear(dims[k], dims[k + 1]) for k in range(n_fc))

    def forward(self, b, x, st):
        h = x
        for l in range(len(self.wl)):
            h = F.relu(ref_sage(b, h, self.wl[l], self.bl[l], self.wr[l], False))
        z = torch.cat([ref_pool(b, h, 1), st], 1)
        for k, fc in enumerate(self.fc):
            z = fc(z)
            if k < len(self.fc) - 1:
                z = F.relu(z)
        return z

    def named_c(self):
        out = {}
        for l in range(len(self.wl)):
            out["sage%d.wl" % l], out["sage%d.bl" % l], out["sage%d.wr" % l] = self.wl[l], self.bl[l], self.wr[l]
        for k, fc in enumerate(self.fc):
            out["fc%d.w" % k], out["fc%d.b" % k] = fc.weight, fc.bias
        return out


def c_tensors(prm_ptr, which):
    prm = prm_ptr.contents
    base = np.ctypeslib.as_array(getattr(prm, which), (prm.n,))
    return {prm.t[i].name.decode(): base[prm.t[i].off:prm.t[i].off + prm.t[i].n]
            for i in range(prm.n_tensors)}


def test_dippm_model():
    in_dim, hidden, sdim, fch, od = 12, 32, 5, 24, 1
    graphs = random_graphs(rng, [int(s) for s in rng.integers(8, 60, 10)], extra=False)
    bt = Batch(graphs)
    x = f32(bt.N, in_dim, rng=rng)
    st = f32(bt.G, sdim, rng=rng)
    y = f32(bt.G, od, rng=rng)
    cfg = SageModelCfg(in_dim, hidden, 3, sdim, 3, fch, od, 1, False)
    err = Err()
    m = lib.dlp_nn_sage_model_new(C.byref(cfg), 5, C.byref(err))
    assert m, err.msg
    prm = lib.dlp_nn_sage_model_params(m)
    ref = RefDippm(in_dim, hidden, sdim, fch, od).double()
    cw = c_tensors(prm, "w")
    with torch.no_grad():
        for name, t in ref.named_c().items():
            t.copy_(torch.from_numpy(cw[name].reshape(t.shape)))
    tx, tst, ty = (torch.from_numpy(a.astype(np.float64)) for a in (x, st, y))
    # forward + gradients of one MSE step
    out = z32(bt.G, od)
    assert lib.dlp_nn_sage_model_forward(m, C.byref(bt.g), P(x), P(st), P(out), C.byref(err)) == 0
    lib.dlp_nn_params_zero_grad(prm)
    dout = z32(bt.G, od)
    lib.dlp_nn_mse_loss(P(dout), P(out), P(y), bt.G * od)
    lib.dlp_nn_sage_model_backward(m, C.byref(bt.g), P(x), P(st), P(dout))
    to = ref(bt, tx, tst)
    F.mse_loss(to, ty).backward()
    cg = c_tensors(prm, "g")
    pairs = [("out", out, to)] + [(n, cg[n].reshape(t.shape), t.grad) for n, t in ref.named_c().items()]
    close("dippm model forward + all gradients", pairs)
    # 20 Adam steps: loss curves
    lr = 3e-3
    opt = torch.optim.Adam(ref.parameters(), lr=lr)
    o = Opt(1, lr, 0, 0.9, 0.999, 1e-8, 0)
    closs, tloss = [], []
    for _ in range(20):
        lv = C.c_double()
        assert lib.dlp_nn_sage_model_train_step(m, C.byref(bt.g), P(x), P(st), P(y), C.byref(o),
                                                C.c_double(0), C.byref(lv), C.byref(err)) == 0
        closs.append(lv.value)
        opt.zero_grad()
        lt = F.mse_loss(ref(bt, tx, tst), ty)
        lt.backward()
        opt.step()
        tloss.append(lt.item())
    worst = max(abs(a - b) / abs(b) for a, b in zip(closs, tloss))
    check("dippm 20-step Adam loss curve within 1e-3", worst <= 1e-3,
          "worst rel %.3g; loss C %.6g -> %.6g, torch %.6g -> %.6g"
          % (worst, closs[0], closs[-1], tloss[0], tloss[-1]))
    check("dippm loss decreases", closs[-1] < closs[0] * 0.9, str((closs[0], closs[-1])))
    lib.dlp_nn_sage_model_delete(C.c_void_p(m))
    bt.free()


def test_bad_input():
    d = GraphDesc(3, 1, None, None)
    s = np.array([0], np.int32)
    dd = np.array([3], np.int32)             # outside 0..2
    d.src, d.dst = s.ctypes.data, dd.ctypes.data
    g, err = Graph(), Err()
    rc = lib.dlp_nn_graph_build(C.byref(g), C.byref(d), None, 1, 0, C.byref(err))
    check("graph with an out-of-range edge is refused", rc != 0 and b"outside" in err.msg, err.msg)
    bad = SageModelCfg(0, 32, 3, 0, 3, 8, 1, 1, False)
    m = lib.dlp_nn_sage_model_new(C.byref(bad), 1, C.byref(err))
    check("model with a zero input size is refused", not m and b"architecture" in err.msg, err.msg)


def main():
    tests = [test_linear, lambda: test_sage(False), lambda: test_sage(True), test_sage_undirected, test_gcn, test_gin,
             lambda: test_gat(True), lambda: test_gat(False), lambda: test_gat(True, True),
             lambda: test_gat(False, True, 0.3),
             test_lstm, test_norms,
             test_activations, test_dropout, test_masking, test_pool_concat, test_losses, test_optimizers, test_schedules,
             test_dippm_model, test_bad_input]
    for t in tests:
        try:
            t()
        except Exception as e:  # a crash in one test is a failure, not an abort
            import traceback
            traceback.print_exc()
            check(getattr(t, "__name__", "test"), False, repr(e))
    B.free()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

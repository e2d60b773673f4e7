"""dlperf from Python: the library (build/libdlperf.so) through ctypes.

    import dlperf
    pred = dlperf.Predictor()                  # the repository's models/
    r = pred.predict("resnet50.onnx", device="h100", precision="fp16",
                     batch=8, runtime="graph")
    print(r["latency_ms"], r["memory_mib"], r["mig_profile"])

    rs = pred.predict_many("candidates/", device="h100", batch=8)  # NAS

    m = dlperf.Model("bert.onnx")              # open once, predict many
    for seq in (128, 256, 512):
        print(pred.predict(m, device="h100", dims={"seq": seq})["latency_ms"])
    print(m.inspect(batch=1, dims={"seq": 128})["summary"])

predict() returns the object `dlperf predict --json` prints (README,
"dlperf predict"); inspect() the one of `dlperf inspect --json`. Errors
(unknown device, bad argument, corrupt model file, unbound dims) raise
DlperfError with the library's message and status name.

Nothing but the standard library is needed: no PyTorch, no onnx. The
shared library is found at $DLPERF_LIB, else ../build/libdlperf.so next to
this file, else on the loader's path. A Predictor (its loaded files) is
safe to share between threads; ctypes releases the GIL during each call,
so a thread pool predicts a directory of graphs in parallel. A Model is
one thread's at a time.
"""
import concurrent.futures
import ctypes
import ctypes.util
import json
import math
import os

__all__ = ["DlperfError", "Model", "Predictor", "library_path"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_STATUS = ["OK", "ARG", "IO", "FORMAT", "UNSUPPORTED", "SHAPE", "LIMIT",
           "NOMEM", "GRAPH", "NOT_FOUND"]


class DlperfError(Exception):
    """A library call failed: .status is the dlp_status name ("ARG",
    "NOT_FOUND", ...), str() the library's message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class _Error(ctypes.Structure):          # dlp_error (include/dlperf.h)
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]


def library_path():
    """The shared library this module loads (see the module text)."""
    env = os.environ.get("DLPERF_LIB")
    if env:
        return env
    local = os.path.join(_HERE, "..", "build", "libdlperf.so")
    if os.path.exists(local):
        return os.path.normpath(local)
    return ctypes.util.find_library("dlperf") or "libdlperf.so"


_lib = None


def _library():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(library_path())
    P, S = ctypes.c_void_p, ctypes.c_char_p
    E = ctypes.POINTER(_Error)
    sigs = {
        "dlp_model_open": [S, ctypes.POINTER(P), E],
        "dlp_model_open_memory": [ctypes.c_char_p, ctypes.c_size_t, S,
                                  ctypes.POINTER(P), E],
        "dlp_model_free": [P],
        "dlp_model_bind_dim": [P, S, ctypes.c_int64, E],
        "dlp_model_set_batch": [P, ctypes.c_int64, E],
        "dlp_model_analyze": [P, E],
        "dlp_model_to_json": [P, ctypes.POINTER(P), E],
        "dlp_model_warning_count": [P],
        "dlp_model_warning": [P, ctypes.c_int],
        "dlp_predictor_open": [S, ctypes.POINTER(P), E],
        "dlp_predictor_close": [P],
        "dlp_predictor_set_size": [P],
        "dlp_predictor_set_name": [P, ctypes.c_int],
        "dlp_predictor_set_best": [P, ctypes.c_int],
        "dlp_predict_json": [P, P, S, S, ctypes.POINTER(P), E],
        "dlp_free": [P],
    }
    for name, args in sigs.items():
        f = getattr(lib, name)
        f.argtypes = args
        f.restype = ctypes.c_int
    for name in ("dlp_model_free", "dlp_predictor_close", "dlp_free",
                 "dlp_predictor_set_best"):
        getattr(lib, name).restype = None
    lib.dlp_model_warning.restype = S
    lib.dlp_predictor_set_name.restype = S
    _lib = lib
    return lib


def _check(status, err):
    if status:
        name = _STATUS[status] if 0 <= status < len(_STATUS) else str(status)
        raise DlperfError(name, err.msg.decode("utf-8", "replace"))


def _take_json(ptr):
    """The library's malloc'd JSON text as a Python object; frees it."""
    try:
        return json.loads(ctypes.string_at(ptr.value).decode("utf-8"))
    finally:
        _library().dlp_free(ptr)


def _name_of(model):
    """The name results carry for a Model, an onnx.ModelProto or a path."""
    if isinstance(model, Model):
        return model.name
    if hasattr(model, "SerializeToString"):
        return (model.graph.name or "model") + ".onnx"
    return os.path.basename(os.fspath(model))


class _Owned:
    """A library object released by the function named _FREE: close(),
    or the end of a with block, or garbage collection."""
    _FREE = None
    _h = None

    def close(self):
        if self._h and self._h.value:
            getattr(_library(), self._FREE)(self._h)
        self._h = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Model(_Owned):
    """An ONNX graph file (or its bytes), opened by the library. Weights
    are never read; graphs with their external data stripped work."""
    _FREE = "dlp_model_free"

    def __init__(self, path=None, data=None, name=None):
        if (path is None) == (data is None):
            raise ValueError("Model wants a path or data, not both")
        lib, err, h = _library(), _Error(), ctypes.c_void_p()
        if path is not None:
            self.name = name or os.path.basename(os.fspath(path))
            st = lib.dlp_model_open(os.fsencode(path), ctypes.byref(h),
                                    ctypes.byref(err))
        else:
            self._data = bytes(data)    # the library reads it in place
            self.name = name or "model.onnx"
            st = lib.dlp_model_open_memory(self._data, len(self._data),
                                           self.name.encode(), ctypes.byref(h),
                                           ctypes.byref(err))
        _check(st, err)
        self._h = h

    def _handle(self):
        if not self._h:
            raise DlperfError("ARG", "model is closed")
        return self._h

    def inspect(self, batch=None, dims=None):
        """Binds batch and the symbolic dims ({"seq": 128}), analyses, and
        returns `dlperf inspect --json`'s object (summary, nodes, values)."""
        lib, err, h = _library(), _Error(), self._handle()
        if batch is not None:
            _check(lib.dlp_model_set_batch(h, int(batch), ctypes.byref(err)), err)
        for k, v in (dims or {}).items():
            _check(lib.dlp_model_bind_dim(h, k.encode(), int(v),
                                          ctypes.byref(err)), err)
        _check(lib.dlp_model_analyze(h, ctypes.byref(err)), err)
        out = ctypes.c_void_p()
        _check(lib.dlp_model_to_json(h, ctypes.byref(out), ctypes.byref(err)), err)
        return _take_json(out)

    def warnings(self):
        """What open / analysis noted (unknown ops, unshaped tensors)."""
        lib, h = _library(), self._handle()
        return [lib.dlp_model_warning(h, i).decode("utf-8", "replace")
                for i in range(lib.dlp_model_warning_count(h))]


class Predictor(_Owned):
    """The trained predictor files of a models/ directory (default:
    $DLPERF_MODELS, else the repository's models/). best=True lets the
    slow kinds compete by held-out error too (`dlperf predict --best`)."""
    _FREE = "dlp_predictor_close"

    def __init__(self, models_dir=None, best=False):
        if models_dir is None:
            models_dir = os.environ.get("DLPERF_MODELS") or \
                os.path.normpath(os.path.join(_HERE, "..", "models"))
        lib, err, h = _library(), _Error(), ctypes.c_void_p()
        _check(lib.dlp_predictor_open(os.fsencode(models_dir), ctypes.byref(h),
                                      ctypes.byref(err)), err)
        self._h = h
        self.models_dir = models_dir
        if best:
            lib.dlp_predictor_set_best(h, 1)

    @property
    def files(self):
        """"kind (file name)" of every loaded predictor file."""
        lib = _library()
        return [lib.dlp_predictor_set_name(self._h, i).decode()
                for i in range(lib.dlp_predictor_set_size(self._h))]

    def predict(self, model, device, precision=None, runtime=None, mode=None,
                batch=None, dims=None, resolution=None, sms=None, mig=None,
                slo_ms=None, host_us=None, measured_dir=None,
                skip_absent_dims=None):
        """Latency, peak memory, energy, throughput, power, intervals and
        the MIG advice of model (a Model, a path, or an onnx.ModelProto
        built in memory, the last two opened for this call)
        on device, as `dlperf predict --json`'s object. resolution: R or
        (H, W) pixels for image models; the rest as the CLI's options."""
        if not self._h:
            raise DlperfError("ARG", "predictor set is closed")
        req = {"device": device, "precision": precision, "runtime": runtime,
               "mode": mode, "batch": batch, "sms": sms, "mig": mig,
               "slo_ms": slo_ms, "host_us": host_us,
               "measured_dir": measured_dir,
               "skip_absent_dims": skip_absent_dims}
        if resolution is not None:
            h, w = (resolution, resolution) if isinstance(resolution, int) \
                else resolution
            req["height"], req["width"] = h, w
        if dims:
            req["dims"] = dict(dims)
        req = {k: v for k, v in req.items() if v is not None}
        for k in ("slo_ms", "host_us"):
            if isinstance(req.get(k), float) and not math.isfinite(req[k]):
                raise DlperfError("ARG", "%s must be a finite number, not %r"
                                  % (k, req[k]))
        own = not isinstance(model, Model)
        if not own:
            m = model
        elif hasattr(model, "SerializeToString"):     # an onnx.ModelProto
            m = Model(data=model.SerializeToString(), name=_name_of(model))
        else:
            m = Model(model)
        try:
            lib, err, out = _library(), _Error(), ctypes.c_void_p()
            _check(lib.dlp_predict_json(self._h, m._handle(),
                                        json.dumps(req).encode(),
                                        m.name.encode(), ctypes.byref(out),
                                        ctypes.byref(err)), err)
            return _take_json(out)
        finally:
            if own:
                m.close()

    def predict_many(self, models, device, jobs=None, **options):
        """predict() over many models (paths, or a directory whose *.onnx
        files are taken in name order) on `jobs` threads (default: CPUs),
        in input order: the NAS case, as `dlperf predict DIR --json`. A
        model that fails gives {"model": name, "error": message,
        "status": name} in its place instead of stopping the others."""
        if isinstance(models, (str, os.PathLike)) and os.path.isdir(models):
            d = os.fspath(models)
            models = [os.path.join(d, f) for f in sorted(os.listdir(d))
                      if f.endswith(".onnx")]

        def one(m):
            try:
                return self.predict(m, device, **options)
            except DlperfError as e:
                return {"model": _name_of(m), "error": str(e), "status": e.status}

        models = list(models)
        with concurrent.futures.ThreadPoolExecutor(jobs or os.cpu_count() or 1) as ex:
            return list(ex.map(one, models))

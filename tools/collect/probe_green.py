"""probe_green.py - exits 0 when CUDA green contexts work on GPU 0 (a matrix
product inside a 16-SM context, then one outside it), 1 otherwise; the batch
command turns on DLP_SMS only then."""
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
import measure  # noqa: E402

try:
    a = torch.randn(2048, 2048, device="cuda")
    torch.cuda.synchronize()
    g, enter, leave = measure.green_context(torch, 16)
    enter()
    s = float((a @ a).sum())
    torch.cuda.synchronize()
    leave()
    s2 = float((a @ a).sum())
    print("green context ok (%d SMs): %g %g" % (16, s, s2))
except Exception as e:  # noqa: BLE001
    print("green context failed: %s: %s" % (type(e).__name__, e))
    sys.exit(1)

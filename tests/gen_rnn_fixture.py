#!/usr/bin/python3
"""gen_rnn_fixture.py -- a recurrent layer for the training-memory count
(feat.c: train_saves_input, train_saves_output, rnn_reserve_bytes).

Writes, weights stripped as the dataset strips them
(gen_model_fixtures.strip):
- tests/fixtures/memest/memest_lstm.onnx:
  X [8, 2, 16] (time-major: 8 steps, batch 2) -> nn.LSTM(16, 8,
  bidirectional) -> Y [8, 2, 16] -> Linear(16, 4)
- tests/fixtures/memest/memest_lstm2d.onnx (Sequencer2D's token mixer,
  rnn_input_copied):
  X [2, 4, 6, 16] (B, H, W, C) -> columns x.permute(0, 2, 1, 3)
  .reshape(12, 4, 16) and rows x.reshape(8, 6, 16), each through its
  own nn.LSTM(16, 8, bidirectional, batch_first) -> both back to
  [2, 4, 6, 16] -> Concat on C. The generator checks with PyTorch that
  the columns' reshape copies X and the rows' is a view of it.

There is no autograd oracle on this machine: CPU PyTorch runs the LSTM
step by step (its own saved tensors), not cuDNN's _cudnn_rnn, whose
backward keeps the input, the output and the reserve buffer
(tools/collect/probe_rnn.py measures them on the GPU). The expected
counts are derived by hand in tests/test_memest.c (test_lstm).
"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_model_fixtures import strip  # noqa: E402

OUT = os.path.join(HERE, "fixtures", "memest")


class LstmHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(16, 8, bidirectional=True)
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class Lstm2d(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn_v = torch.nn.LSTM(16, 8, bidirectional=True, batch_first=True)
        self.rnn_h = torch.nn.LSTM(16, 8, bidirectional=True, batch_first=True)

    def forward(self, x):
        b, h, w, c = x.shape
        v, _ = self.rnn_v(x.permute(0, 2, 1, 3).reshape(-1, h, c))
        v = v.reshape(b, w, h, -1).permute(0, 2, 1, 3)
        r, _ = self.rnn_h(x.reshape(-1, w, c))
        return torch.cat([v, r.reshape(b, h, w, -1)], dim=-1)


def check_copies():
    """The premise of rnn_input_copied, checked on PyTorch itself."""
    x = torch.randn(2, 4, 6, 16)
    cols = x.permute(0, 2, 1, 3).reshape(-1, 4, 16)
    rows = x.reshape(-1, 6, 16)
    assert cols.data_ptr() != x.data_ptr() and cols._base is None, \
        "the permuted reshape is expected to copy"
    assert rows.data_ptr() == x.data_ptr() and rows._base is x, \
        "the plain reshape is expected to be a view"


def main():
    torch.manual_seed(0)
    path = os.path.join(OUT, "memest_lstm.onnx")
    torch.onnx.export(LstmHead().eval(), (torch.randn(8, 2, 16),), path,
                      opset_version=17, input_names=["X"],
                      output_names=["Y"])
    strip(path, path)
    print(path)
    check_copies()
    path = os.path.join(OUT, "memest_lstm2d.onnx")
    torch.onnx.export(Lstm2d().eval(), (torch.randn(2, 4, 6, 16),), path,
                      opset_version=17, input_names=["X"],
                      output_names=["Y"])
    strip(path, path)
    print(path)


if __name__ == "__main__":
    main()

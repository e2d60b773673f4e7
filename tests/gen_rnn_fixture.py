#!/usr/bin/python3
"""gen_rnn_fixture.py -- a recurrent layer for the training-memory count
(feat.c: train_saves_input, train_saves_output, rnn_reserve_bytes).

Writes tests/fixtures/memest/memest_lstm.onnx (weights stripped as the
dataset strips them, gen_model_fixtures.strip):
  X [8, 2, 16] (time-major: 8 steps, batch 2) -> nn.LSTM(16, 8,
  bidirectional) -> Y [8, 2, 16] -> Linear(16, 4)

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


def main():
    torch.manual_seed(0)
    path = os.path.join(OUT, "memest_lstm.onnx")
    torch.onnx.export(LstmHead().eval(), (torch.randn(8, 2, 16),), path,
                      opset_version=17, input_names=["X"],
                      output_names=["Y"])
    strip(path, path)
    print(path)


if __name__ == "__main__":
    main()

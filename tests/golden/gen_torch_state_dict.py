"""Writes the PyTorch files of tests/io/torch_*_test.cpp to tests/data/io/torch/.

Run with the system Python that has PyTorch 1.13 and NumPy:
    /usr/bin/python3 tests/golden/gen_torch_state_dict.py

- cnn.pt: state_dict of CNN (Conv2d -> BatchNorm2d -> ReLU -> max pool -> flatten -> Linear ->
  ReLU -> Linear) after three training-mode forwards (non-trivial running stats);
  cnn_input.npy [2, 3, 8, 8] and cnn_logits.npy (eval mode).
- text.pt: state_dict of TextNet (Embedding -> Conv1d -> ReLU -> LayerNorm -> mean -> Linear);
  text_input.npy (int64 [2, 5]) and text_logits.npy.
- dtypes.pt / dtypes_p4.pt (pickle protocol 4): one tensor of every storage dtype, strided
  and offset views, two views of one storage, a 0-d, an empty and an expanded tensor, and a
  Parameter. The values are spelled out in tests/io/torch_load_test.cpp.
- evil_*.pt: torch.save of dicts holding objects whose __reduce__ calls os.system,
  builtins.eval or subprocess.Popen (they would create /tmp/jx_torch_pwned_<name> if
  unpickled by Python).
"""
import collections
import os
import subprocess

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "io", "torch")


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = torch.flatten(x, 1)  # C, H, W order: the Flax model needs linear_after_flatten
        return self.fc2(F.relu(self.fc1(x)))


class TextNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(10, 6)
        self.conv = nn.Conv1d(6, 8, 3, padding=1)
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 3)

    def forward(self, idx):
        x = self.tok(idx)                                    # B, T, 6
        x = self.conv(x.transpose(1, 2)).transpose(1, 2)     # B, T, 8
        x = self.norm(F.relu(x))
        return self.head(x.mean(1))


def make_cnn():
    torch.manual_seed(0)
    model = CNN()
    with torch.no_grad():
        model.bn.weight.uniform_(0.5, 1.5)
        model.bn.bias.uniform_(-0.5, 0.5)
    model.train()
    for _ in range(3):
        model(torch.randn(4, 3, 8, 8) * 2 + 0.5)
    model.eval()
    return model


def make_text():
    torch.manual_seed(1)
    model = TextNet()
    with torch.no_grad():
        model.norm.weight.uniform_(0.5, 1.5)
        model.norm.bias.uniform_(-0.5, 0.5)
    return model.eval()


class Evil:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def marker(name):
    return "/tmp/jx_torch_pwned_" + name


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))

    cnn = make_cnn()
    torch.save(cnn.state_dict(), os.path.join(OUT, "cnn.pt"))
    torch.manual_seed(2)
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        y = cnn(x)
    np.save(os.path.join(OUT, "cnn_input.npy"), x.numpy())
    np.save(os.path.join(OUT, "cnn_logits.npy"), y.numpy())

    text = make_text()
    torch.save(text.state_dict(), os.path.join(OUT, "text.pt"))
    idx = torch.tensor([[1, 4, 9, 0, 3], [7, 7, 2, 5, 8]], dtype=torch.int64)
    with torch.no_grad():
        y = text(idx)
    np.save(os.path.join(OUT, "text_input.npy"), idx.numpy())
    np.save(os.path.join(OUT, "text_logits.npy"), y.numpy())

    d = collections.OrderedDict()
    d["f32"] = torch.tensor([[1.5, -2.25, 3.0], [0.125, -0.0, 1e30]], dtype=torch.float32)
    d["f64"] = torch.tensor([0.1, -1e300, 2.5], dtype=torch.float64)
    d["f16"] = torch.tensor([1.0, -2.5, 65504.0, 2.0 ** -14], dtype=torch.float16)
    d["bf16"] = torch.tensor([1.0, -3.5, 256.0, 0.0078125], dtype=torch.bfloat16)
    d["i64"] = torch.tensor([-(2 ** 62), 0, 2 ** 40 + 3], dtype=torch.int64)
    d["i32"] = torch.tensor([-2147483648, 7, 2147483647], dtype=torch.int32)
    d["i16"] = torch.tensor([-32768, 12, 32767], dtype=torch.int16)
    d["i8"] = torch.tensor([-128, 5, 127], dtype=torch.int8)
    d["u8"] = torch.tensor([0, 200, 255], dtype=torch.uint8)
    d["b"] = torch.tensor([True, False, True])
    base = torch.arange(12, dtype=torch.float32).view(3, 4)
    d["transposed"] = base.t()                       # [4, 3], strides (1, 4)
    grid = torch.arange(20, dtype=torch.int64).view(4, 5)
    d["stepped"] = grid[::2, 1::2]                   # [2, 2], strides (10, 2), offset 1
    shared = torch.arange(10, dtype=torch.int32)
    d["shared_a"] = shared[2:5]                      # offset 2
    d["shared_b"] = shared[4:].view(2, 3)            # offset 4, same storage
    d["scalar"] = torch.tensor(7.5, dtype=torch.float64)
    d["empty"] = torch.zeros(0, 3)
    d["expanded"] = torch.tensor([1.0, 2.0, 3.0]).expand(2, 3)  # strides (0, 1)
    d["param"] = nn.Parameter(torch.tensor([0.25, -0.5]))
    torch.save(d, os.path.join(OUT, "dtypes.pt"))
    torch.save(d, os.path.join(OUT, "dtypes_p4.pt"), pickle_protocol=4)

    evil = {
        "os_system": (os.system, ("touch " + marker("os_system"),)),
        "eval": (eval, ("__import__('os').system('touch " + marker("eval") + "')",)),
        "popen": (subprocess.Popen, (["touch", marker("popen")],)),
    }
    for name, (fn, args) in evil.items():
        sd = collections.OrderedDict(w=torch.zeros(2), bad=Evil(fn, args))
        torch.save(sd, os.path.join(OUT, "evil_" + name + ".pt"))
    sd = collections.OrderedDict(w=torch.zeros(2), bad=Evil(os.system, ("touch " + marker("p4"),)))
    torch.save(sd, os.path.join(OUT, "evil_p4.pt"), pickle_protocol=4)  # STACK_GLOBAL

    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print("wrote", len(os.listdir(OUT)), "files,", total, "bytes, to", os.path.normpath(OUT))


if __name__ == "__main__":
    main()

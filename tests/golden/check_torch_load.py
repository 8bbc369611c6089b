"""Checks that PyTorch reads the state dicts jx writes (tests/io/torch_mapping_test.cpp).

    /usr/bin/python3 tests/golden/check_torch_load.py FILE.pt NPY_DIR [FILE.pt NPY_DIR ...]

For each pair: torch.load(FILE.pt) must be an OrderedDict whose keys are those listed, in
order, in NPY_DIR/keys.txt, and each tensor must equal NPY_DIR/<key>.npy exactly (dtype,
shape, bits; bfloat16 arrives as jnp.save writes it, raw '<V2'). When NPY_DIR also holds
input.npy and logits.npy, the state dict is loaded (strict) into gen_torch_state_dict.CNN,
which must reproduce the logits jx computed within 1e-5.

Exit status: 0 when everything matches, 1 on a mismatch (printed), 77 when torch cannot be
imported (the C++ test then skips).
"""
import collections
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # the test skips, saying why
    print("cannot import torch/numpy:", e)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_torch_state_dict  # noqa: E402  (the models)


def as_numpy(t):
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def check(pt, npy_dir):
    errors = []
    sd = torch.load(pt)
    if not isinstance(sd, collections.OrderedDict):
        return ["%s: torch.load gave %s, not an OrderedDict" % (pt, type(sd).__name__)]
    with open(os.path.join(npy_dir, "keys.txt")) as f:
        keys = f.read().split()
    if list(sd.keys()) != keys:
        errors.append("%s: keys %s, expected %s" % (pt, list(sd.keys()), keys))
    for k in keys:
        if k not in sd:
            continue
        want = np.load(os.path.join(npy_dir, k + ".npy"))
        got = as_numpy(sd[k])
        if want.dtype.kind == "V":  # bfloat16 bits
            want = want.view(np.uint16)
        if got.dtype != want.dtype or got.shape != want.shape:
            errors.append("%s: %s is %s%s, expected %s%s" % (pt, k, got.dtype, got.shape, want.dtype, want.shape))
        elif got.tobytes() != want.tobytes():
            errors.append("%s: %s differs: %s vs %s" % (pt, k, got.ravel()[:8], want.ravel()[:8]))
    logits = os.path.join(npy_dir, "logits.npy")
    if os.path.exists(logits):
        model = gen_torch_state_dict.CNN()
        model.load_state_dict(sd, strict=True)
        model.eval()
        x = torch.from_numpy(np.load(os.path.join(npy_dir, "input.npy")))
        with torch.no_grad():
            y = model(x).numpy()
        want = np.load(logits)
        err = float(np.max(np.abs(y - want)))
        print("%s: max |torch logits - jx logits| = %.3g" % (pt, err))
        if not err <= 1e-5:
            errors.append("%s: logits differ by %g:\n%s\n%s" % (pt, err, y, want))
    return errors


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__)
        return 2
    errors = []
    for i in range(0, len(argv), 2):
        errors += check(argv[i], argv[i + 1])
    for e in errors:
        print("MISMATCH", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Writes tests/fixtures/memest/view_oracle.txt (run with /usr/bin/python3):
cases for the layout rule's view test (src/feat/feat_layout.c,
dlp_feat_view_strides), answered by PyTorch itself. Each case takes a
contiguous tensor, permutes it and may narrow one dimension (the strided
tensors the walk meets: permuted views, Split parts), then asks
Tensor.view for a random regrouping of its elements. One line per case:

    r  sizes[r]  strides[r]  m  new_sizes[m]  ok  new_strides[m]

ok is 1 when view succeeds (new_strides are PyTorch's), 0 when it raises
(reshape would copy; new_strides are then 0)."""
import random
import torch

OUT = "tests/fixtures/memest/view_oracle.txt"


def factor_shape(rng, n):
    """a random shape whose product is n, with some 1s"""
    dims = []
    while n > 1:
        ds = [d for d in range(2, n + 1) if n % d == 0]
        d = rng.choice(ds[:4] + [n])
        dims.append(d)
        n //= d
    for _ in range(rng.randint(0, 1)):
        dims.insert(rng.randint(0, len(dims)), 1)
    rng.shuffle(dims)
    return dims or [1]


def main():
    rng = random.Random(7)
    lines = []
    while len(lines) < 400:
        r = rng.randint(1, 5)
        base = [rng.choice([1, 2, 3, 4, 6]) for _ in range(r)]
        x = torch.empty(base)
        perm = list(range(r))
        rng.shuffle(perm)
        x = x.permute(*perm)
        if rng.random() < 0.3:
            d = rng.randrange(r)
            if x.shape[d] > 1:
                x = x.narrow(d, 0, rng.randint(1, x.shape[d] - 1))
        # half the targets merge or split neighbours of the current shape
        if rng.random() < 0.5 and x.dim() > 1:
            k = rng.randrange(x.dim() - 1)
            new = list(x.shape[:k]) + [x.shape[k] * x.shape[k + 1]] + \
                list(x.shape[k + 2:])
        else:
            new = factor_shape(rng, x.numel())
        try:
            y = x.view(new)
            ok, st = 1, list(y.stride())
        except RuntimeError:
            ok, st = 0, [0] * len(new)
        row = [x.dim()] + list(x.shape) + list(x.stride()) + [len(new)] + \
            new + [ok] + st
        lines.append(" ".join(str(int(v)) for v in row))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", OUT, len(lines), "cases")


if __name__ == "__main__":
    main()

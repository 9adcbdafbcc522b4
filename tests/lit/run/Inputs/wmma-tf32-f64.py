# Inputs and the exact expected result of run/wmma-tf32-f64.test: small integers, so that D = A * B + C is exact
# in tf32 and f64. Usage: wmma-tf32-f64.py gen PREFIX | check PREFIX
import struct, sys

SHAPES = {"tf32": (16, 16, 8, "f"), "f64": (8, 8, 4, "d")}


def matrices(m, n, k):
    a = [[(i - kk) % 5 - 2 for kk in range(k)] for i in range(m)]
    b = [[(kk + 2 * j) % 7 - 3 for j in range(n)] for kk in range(k)]
    c = [[i * j - 5 for j in range(n)] for i in range(m)]
    return a, b, c


mode, prefix = sys.argv[1], sys.argv[2]
for name, (m, n, k, fmt) in SHAPES.items():
    a, b, c = matrices(m, n, k)
    if mode == "gen":
        rows = lambda x: [v for r in x for v in r]
        open(f"{prefix}.{name}.a", "wb").write(struct.pack(f"<{m * k}{fmt}", *rows(a)))
        b_colmajor = [b[kk][j] for j in range(n) for kk in range(k)]
        open(f"{prefix}.{name}.b", "wb").write(struct.pack(f"<{k * n}{fmt}", *b_colmajor))
        open(f"{prefix}.{name}.c", "wb").write(struct.pack(f"<{m * n}{fmt}", *rows(c)))
    else:
        d = struct.unpack(f"<{m * n}{fmt}", open(f"{prefix}.{name}.d", "rb").read())
        wrong = sum(d[i * n + j] != c[i][j] + sum(a[i][kk] * b[kk][j] for kk in range(k))
                    for i in range(m) for j in range(n))
        print(name, wrong, "wrong")

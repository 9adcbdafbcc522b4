"""CuTe's layout algebra, as far as the lit generators need it to place matrix elements the way CUTLASS's atoms
(SM100 TMEM loads, SM100 ldmatrix b8 forms, SM120 block-scaled mma) say: imported by ldmatrix_b8.py,
mma_block_scale.py and tcgen05_ldst.py, which run from this folder."""


def size(shape):
    """The number of coordinates of a (nested) shape."""
    if isinstance(shape, int):
        return shape
    n = 1
    for s in shape:
        n *= size(s)
    return n


def layout(shape, stride, coord):
    """The index of the (flattened, colexicographic) coordinate coord in a nested shape/stride."""
    if isinstance(shape, int):
        return coord * stride
    idx = 0
    for s, d in zip(shape, stride):
        idx += layout(s, d, coord % size(s))
        coord //= size(s)
    return idx

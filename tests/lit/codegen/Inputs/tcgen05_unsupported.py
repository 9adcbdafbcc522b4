"""Writes into argv[1] one kernel per form the CPU back end does not do (tcgen05_*.ptx for sm_100a, each valid PTX for
ptxas; none left) and an sm_120a mma.sync pairing ptxas refuses (mma_sync_*.ptx): each must fail to compile with a
"not supported" error rather than run with wrong results."""
import os
import sys

HEAD = """.version 8.8
.target {target}
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<16>, %a<4>, %b<2>, %d<4>, %sa, %sb;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  {instr}
  ret;
}}
"""
FORMS = {}  # every tcgen05 form the ISA's syntax defines now lowers
SM103 = {}
SM120 = {
    "mma_sync_4x_ue8m0":
        "mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0 "
        "{%d0, %d1, %d2, %d3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%f0, %f1, %f2, %f3}, %sa, {0, 0}, %sb, {0, 0};",
}
root = sys.argv[1]
os.makedirs(root, exist_ok=True)
for forms, target in ((FORMS, "sm_100a"), (SM103, "sm_103a"), (SM120, "sm_120a")):
    for name, instr in forms.items():
        with open(os.path.join(root, f"{name}.ptx"), "w") as f:
            f.write(HEAD.format(target=target, instr=instr))
